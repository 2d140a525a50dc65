// `node bench/callgrind.mjs` (after `pnpm build`; needs valgrind): instructions executed per
// verification, counted by callgrind, which a busy machine does not change the way it changes
// time. Each case runs in its own process under `valgrind --tool=callgrind`: warm-up calls, then
// the process zeroes its own counters (callgrind_control), makes N calls, one at a time, and has
// them dumped; start-up and warm-up are so left out. Cases: `verify` and the Koa `bearer`
// middleware, HS256 and RS256, token cache off and on. Compare two builds by running this script
// from each checkout, and repeat a case when it matters: a garbage collection that falls inside
// the N calls or not moves a figure by several percent.
// Environment: BENCH_CALLS (N, default 2000), BENCH_WARMUP (default 2000), BENCH_CASES
// (comma-separated; default all). `node bench/callgrind.mjs <case> <calls>` is one such process.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CASES = [
  'verify-hs',
  'verify-hs-cached',
  'verify-rs',
  'verify-rs-cached',
  'koa-hs',
  'koa-rs',
  'koa-rs-cached',
]
const WARM_UP = Number(process.env.BENCH_WARMUP ?? 2000)

async function runCase(name, calls) {
  // Imported here only: the parent never builds a verifier.
  const { bearer } = await import('../dist/koa.js')
  const { benchVerifier, tokens } = await import('./fixtures.mjs')
  const alg = name.includes('-hs') ? 'HS256' : 'RS256'
  const verifier = benchVerifier(name.endsWith('-cached'))
  let run
  if (name.startsWith('verify')) {
    const token = tokens[alg]
    run = () => verifier.verify(token)
  } else {
    const middleware = bearer(verifier)
    const header = `Bearer ${tokens[alg]}`
    const next = () => Promise.resolve()
    run = async () => {
      const ctx = { req: { headers: { authorization: header } }, state: {}, status: 404 }
      await middleware(ctx, next)
      if (ctx.state.auth === undefined) throw new Error('the token was refused')
    }
  }
  for (let i = 0; i < WARM_UP; i += 1) await run()
  control('--zero')
  for (let i = 0; i < calls; i += 1) await run()
  control('--dump')
}

/** Asks callgrind to act on this very process, which waits meanwhile. */
function control(action) {
  const result = spawnSync('callgrind_control', [action, String(process.pid)], {
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`callgrind_control ${action}: ${result.stderr}`)
}

/** Instructions per call of one case, in a process of its own under callgrind. */
function instructions(name, calls) {
  const dir = mkdtempSync(join(tmpdir(), 'verifier-callgrind-'))
  try {
    const result = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(dir, 'out.%p')}`,
        process.execPath,
        // One thread for V8: no compiler or GC helper thread adds its work to a window of calls.
        '--single-threaded',
        fileURLToPath(import.meta.url),
        name,
        String(calls),
      ],
      { encoding: 'utf8' },
    )
    if (result.status !== 0) throw new Error(`${name}: ${result.stderr.slice(-2000)}`)
    // The exit file is out.PID; the one dump, out.PID.1.
    const dumps = readdirSync(dir).filter((file) => /^out\.\d+\.\d+$/.test(file))
    if (dumps.length !== 1) throw new Error(`${name}: expected one dump, found ${dumps}`)
    const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dumps[0]), 'utf8'))
    if (totals === null) throw new Error(`${name}: no totals in the callgrind dump`)
    return Number(totals[1]) / calls
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] !== undefined) {
  await runCase(process.argv[2], Number(process.argv[3]))
} else {
  const calls = Number(process.env.BENCH_CALLS ?? 2000)
  const cases = process.env.BENCH_CASES?.split(',') ?? CASES
  console.log(`| case | Ir per call (${calls} calls after ${WARM_UP}) |`)
  console.log('|---|---:|')
  for (const name of cases) console.log(`| ${name} | ${Math.round(instructions(name, calls))} |`)
}
