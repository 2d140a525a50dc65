// Module resolution hooks (see node:module `register`): `fs` and `node:fs`, imported by the MCP
// conformance suite, resolve to the module that adds `globSync`. Only its imports are redirected:
// the `glob` package itself imports `fs`, which must stay Node's.
import { URL } from 'node:url'

const SHIM = new URL('./fs-with-glob-sync.mjs', import.meta.url).href
const SUITE = '/node_modules/@modelcontextprotocol/conformance/'

export async function resolve(specifier, context, nextResolve) {
  const fromSuite = context.parentURL?.includes(SUITE) === true
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: SHIM, shortCircuit: true }
  }
  return nextResolve(specifier, context)
}
