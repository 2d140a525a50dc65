/**
 * One full garbage collection, for the start of an issuer with many tenants.
 *
 * Reading ten thousand tenant files allocates about 2.5 GB of short-lived objects (the `yaml`
 * parser's tokens, mostly), and V8 promotes a share of them to the old generation before they
 * die. Left alone, the key rings and runtimes built next take fresh pages rather than that
 * garbage's, and the process listens with 20 MB more resident memory than after a collection
 * here (docs/benchmarks.md). Node has no API to ask for one; V8's `gc` function is installed in
 * a context made while `--expose-gc` is set, and the flag is set back at once so that no other
 * context (a provider script's, say) gets one.
 *
 * @module
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let collect: (() => void) | undefined

/** Runs a full, blocking garbage collection (about 50 to 100 ms at ten thousand tenants). */
export function collectGarbage(): void {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: unknown }).gc
    if (typeof exposed === 'function') {
      collect = exposed as () => void
    } else {
      setFlagsFromString('--expose-gc')
      try {
        collect = runInNewContext('gc') as () => void
      } finally {
        setFlagsFromString('--no-expose-gc')
      }
    }
  }
  collect()
}
