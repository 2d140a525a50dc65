// `node bench/micro.mjs` (after `pnpm build`): the CPU time of one verification, in process, no
// HTTP: `verifier.verify` next to jose's `jwtVerify` on the same token and key object, and the
// Koa `bearer` middleware next to the baseline middleware of the HTTP benchmark (fixtures.mjs),
// both called with a minimal context, and `bearer` with DPoP (an RS256 token bound to an ES256
// key, a new proof per call, made ahead with jose) next to `bearer` RS256. Cases alternate, round after round, and the median of the
// rounds is printed, so that a busy machine slows every case alike. One call at a time, pinned
// to one core (taskset) when possible, as the HTTP benchmark's server is: the RS256 signature
// check then shares that core with the libuv thread that jose hands it to.
// Environment: BENCH_ROUNDS (default 7), BENCH_CALLS (HS256 and cache hits, default 50000; RS256
// a fifth of it).
import { spawnSync } from 'node:child_process'
import { median } from '@tessera/test-support'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, jwtVerify } from 'jose'
import { bearer } from '../dist/koa.js'
import {
  benchVerifier,
  boundToken,
  dpopProofs,
  ISSUER,
  joseMiddleware,
  keys,
  tokens,
} from './fixtures.mjs'

if (process.env.BENCH_PINNED !== '1' && spawnSync('taskset', ['-c', '0', 'true']).status === 0) {
  const result = spawnSync('taskset', ['-c', '0', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  })
  process.exit(result.status ?? 1)
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const CALLS = Number(process.env.BENCH_CALLS ?? 50_000)

const plain = benchVerifier(false)
const cached = benchVerifier(true)
const joseOptions = (alg) => ({
  issuer: ISSUER,
  algorithms: [alg],
  requiredClaims: ['exp'],
  clockTolerance: 5,
})
const hsOptions = joseOptions('HS256')
const rsOptions = joseOptions('RS256')

/** A Koa middleware as a case: called with the least of a context it reads and writes. */
function middleware(handler, alg) {
  const header = `Bearer ${tokens[alg]}`
  const next = () => Promise.resolve()
  return async () => {
    const ctx = {
      get: () => header,
      req: { headers: { authorization: header } },
      state: {},
      status: 404,
    }
    await handler(ctx, next)
    if (ctx.state.auth === undefined) throw new Error('the token was refused')
  }
}

/** `bearer` with DPoP: each call presents the bound token with the next of `proofs`. */
async function dpopMiddleware(calls) {
  const pair = await generateKeyPair('ES256')
  const jwk = await exportJWK(pair.publicKey)
  const token = await boundToken(await calculateJwkThumbprint(jwk))
  const origin = 'http://127.0.0.1:8080'
  const proofs = await dpopProofs(
    { privateKey: pair.privateKey, jwk },
    `${origin}/orders`,
    token,
    calls,
  )
  const handler = bearer(benchVerifier(false, true))
  const next = () => Promise.resolve()
  let used = 0
  return async () => {
    const ctx = {
      method: 'GET',
      protocol: 'http',
      host: '127.0.0.1:8080',
      originalUrl: '/orders',
      req: { headers: { authorization: `DPoP ${token}`, dpop: proofs[used++] } },
      set: () => {},
      state: {},
      status: 404,
    }
    await handler(ctx, next)
    if (ctx.state.auth === undefined) throw new Error('the proof was refused')
  }
}

const callsOf = (name) => (name.includes('RS256') && !name.includes('hit') ? CALLS / 5 : CALLS)
const DPOP_CASE = '`bearer`, RS256 DPoP-bound, ES256 proof'
const cases = [
  ['jose `jwtVerify`, HS256', () => jwtVerify(tokens.HS256, keys.HS256, hsOptions)],
  ['`verify`, HS256', () => plain.verify(tokens.HS256), 'jose `jwtVerify`, HS256'],
  ['jose `jwtVerify`, RS256', () => jwtVerify(tokens.RS256, keys.RS256, rsOptions)],
  ['`verify`, RS256', () => plain.verify(tokens.RS256), 'jose `jwtVerify`, RS256'],
  ['`verify`, RS256, token cache hit', () => cached.verify(tokens.RS256)],
  ['baseline middleware, HS256', middleware(joseMiddleware('HS256'), 'HS256')],
  ['`bearer`, HS256', middleware(bearer(plain), 'HS256'), 'baseline middleware, HS256'],
  ['baseline middleware, RS256', middleware(joseMiddleware('RS256'), 'RS256')],
  ['`bearer`, RS256', middleware(bearer(plain), 'RS256'), 'baseline middleware, RS256'],
  ['`bearer`, RS256, token cache hit', middleware(bearer(cached), 'RS256')],
  // One proof per call: warm-up and rounds.
  [
    DPOP_CASE,
    await dpopMiddleware(Math.ceil(callsOf(DPOP_CASE) * (ROUNDS + 0.2))),
    '`bearer`, RS256',
  ],
]

async function cpuMicrosPerCall(run, calls) {
  const before = process.cpuUsage()
  for (let i = 0; i < calls; i += 1) await run()
  const { user, system } = process.cpuUsage(before)
  return (user + system) / calls
}

// Warm-up: the JWKS fetch, the token cache entries, V8's optimisation.
for (const [name, run] of cases) await cpuMicrosPerCall(run, Math.ceil(callsOf(name) / 10))
const samples = new Map(cases.map(([name]) => [name, []]))
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, run] of cases)
    samples.get(name).push(await cpuMicrosPerCall(run, callsOf(name)))
}

console.log(`\n${ROUNDS} rounds, median CPU time per call, Node ${process.version}\n`)
console.log('| case | µs per call | vs its baseline (jose; DPoP: `bearer` RS256) |')
console.log('|---|---:|---:|')
for (const [name, , baseline] of cases) {
  const micros = median(samples.get(name))
  const ratio = baseline === undefined ? '—' : (median(samples.get(baseline)) / micros).toFixed(2)
  console.log(`| ${name} | ${micros.toFixed(1)} | ${ratio} |`)
}
