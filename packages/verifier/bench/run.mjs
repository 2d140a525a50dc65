// `pnpm --filter @tessera/verifier bench`: req/s of one Koa route, unprotected, behind this
// package's `bearer` (HS256; RS256 with the token cache off and on; an RS256 token bound to a
// DPoP key, each request with a new ES256 proof) and behind a bare jose `jwtVerify` middleware
// (the baseline), printed as a Markdown table of ratios.
// Every server is started first, each pinned to core 0, the load generator on core 1 (taskset)
// when possible. The cases then take turns, round after round, each measured right before or
// after its baseline, and each ratio is the median of the ratios measured within one round:
// this machine's speed drifts within seconds, and a case measured a minute after its baseline
// would carry that drift into its ratio. The server's CPU time per request is reported too.
// Environment: BENCH_SECONDS (per case and round, default 2), BENCH_ROUNDS (default 12),
// BENCH_CONNECTIONS (default 10).
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { cpuSeconds, median } from '@tessera/test-support'
import autocannon from 'autocannon'
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose'
import { dpopProofs } from './fixtures.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0
if (hasTaskset && process.env.BENCH_LOADGEN_PINNED !== '1') {
  const result = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_LOADGEN_PINNED: '1' },
  })
  process.exit(result.status ?? 1)
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)

// The client's DPoP key: the bearer-rs-dpop server binds its token to it, this process signs the
// proofs.
const dpopPair = await generateKeyPair('ES256')
const dpopJwk = await exportJWK(dpopPair.publicKey)
const dpopKey = { privateKey: dpopPair.privateKey, jwk: dpopJwk }
const dpopJkt = await calculateJwkThumbprint(dpopJwk)

function start(mode) {
  const args = [`${here}server.mjs`, mode, ...(mode === 'bearer-rs-dpop' ? [dpopJkt] : [])]
  const child = hasTaskset
    ? spawn('taskset', ['-c', '0', process.execPath, ...args], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let buffered = ''
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      const line = buffered.split('\n')[0]
      if (buffered.includes('\n')) resolve({ child, ...JSON.parse(line) })
    })
    child.once('exit', (code) => reject(new Error(`${mode} exited with ${code}`)))
  })
}

/**
 * The autocannon options of a run: one DPoP proof per request, made before the run (three times
 * what the last run sent, each with its own jti), or the same bearer token every time.
 */
async function requestOptions(server, seconds) {
  const url = `${server.url}/orders`
  if (server.mode !== 'bearer-rs-dpop') {
    return { url, headers: { authorization: `Bearer ${server.token}` } }
  }
  const count = Math.max(10_000, Math.ceil((server.lastRps ?? 0) * seconds * 3))
  const proofs = await dpopProofs(dpopKey, url, server.token, count)
  let next = 0
  const authorization = `DPoP ${server.token}`
  return {
    url,
    requests: [
      {
        setupRequest(request) {
          // Run out, the last proof is sent again: a replay, refused, and the run fails.
          const dpop = proofs[Math.min(next++, proofs.length - 1)]
          return { ...request, headers: { ...request.headers, authorization, dpop } }
        },
      },
    ],
  }
}

async function load(server, seconds) {
  const options = await requestOptions(server, seconds)
  const cpuBefore = cpuSeconds(server.child.pid)
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: seconds })
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${server.mode}: ${bad} requests failed`)
  server.lastRps = result.requests.average
  const cpu = cpuSeconds(server.child.pid) - cpuBefore
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    // The server's CPU time per request: it hardly moves when other work slows the machine.
    us: (cpu * 1e6) / result.requests.total,
  }
}

const modes = [
  'open',
  'jose-hs',
  'bearer-hs',
  'jose-rs',
  'bearer-rs',
  'bearer-rs-cached',
  'bearer-rs-dpop',
]
const baseline = {
  'bearer-hs': 'jose-hs',
  'bearer-rs': 'jose-rs',
  'bearer-rs-cached': 'jose-rs',
  'bearer-rs-dpop': 'jose-rs',
}
const label = {
  open: 'unprotected route',
  'jose-hs': 'jose jwtVerify, HS256 (baseline)',
  'bearer-hs': '`bearer`, HS256',
  'jose-rs': 'jose jwtVerify, RS256 (baseline)',
  'bearer-rs': '`bearer`, RS256, token cache off',
  'bearer-rs-cached': '`bearer`, RS256, token cache on',
  'bearer-rs-dpop': '`bearer`, RS256 DPoP-bound, ES256 proof',
}

const servers = []
try {
  for (const mode of modes) servers.push({ mode, ...(await start(mode)) })
  // A short warm-up lets V8 optimise before the measured runs.
  for (const server of servers) await load(server, 2)
  // Each case is measured right next to its baseline, in turn first and second (AB, then BA),
  // so that a drift of the machine's speed weighs on both alike.
  const pairs = [
    ['open', 'bearer-rs-cached'],
    ['jose-hs', 'bearer-hs'],
    ['jose-rs', 'bearer-rs', 'bearer-rs-dpop'],
  ]
  const byMode = new Map(servers.map((server) => [server.mode, server]))
  const rounds = []
  for (let round = 0; round < ROUNDS; round++) {
    const results = {}
    for (const pair of pairs) {
      for (const mode of round % 2 === 0 ? pair : [...pair].reverse()) {
        results[mode] = await load(byMode.get(mode), SECONDS)
        process.stderr.write(
          `round ${round + 1}, ${mode}: ${Math.round(results[mode].rps)} req/s\n`,
        )
      }
    }
    rounds.push(results)
  }

  const medianOf = (pick) => median(rounds.map(pick))
  const fixed = (n) => n.toFixed(2)
  console.log(
    `\n${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per case, Node ${process.version}; medians\n`,
  )
  console.log(
    '| case | req/s | p99 ms | vs unprotected | vs jose baseline | server CPU µs/request |',
  )
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const mode of modes) {
    const rps = medianOf((r) => r[mode].rps)
    const p99 = medianOf((r) => r[mode].p99)
    const vsOpen = medianOf((r) => r[mode].rps / r.open.rps)
    const vsJose =
      baseline[mode] === undefined
        ? mode === 'open'
          ? '—'
          : '1.00'
        : fixed(medianOf((r) => r[mode].rps / r[baseline[mode]].rps))
    const us = medianOf((r) => r[mode].us)
    console.log(
      `| ${label[mode]} | ${Math.round(rps)} | ${p99} | ${fixed(vsOpen)} | ${vsJose} | ${us.toFixed(0)} |`,
    )
  }
  // A ratio of req/s, each round, and the same ratio of CPU time per request (inverted: the
  // cheaper the case, the higher), the steadier measure of the two.
  const per = (mode, against) => rounds.map((r) => fixed(r[mode].rps / r[against].rps)).join(', ')
  const cpu = (mode, against) => fixed(medianOf((r) => r[against].us / r[mode].us))
  console.log('')
  for (const [name, mode, against, target] of [
    ['`bearer` HS256 / jose HS256', 'bearer-hs', 'jose-hs', 0.95],
    ['`bearer` RS256 / jose RS256', 'bearer-rs', 'jose-rs', 0.95],
    ['token cache on / unprotected', 'bearer-rs-cached', 'open', 0.85],
    // What a proof costs: its ES256 signature, its key's import and thumbprint, the replay cache.
    ['DPoP / RS256 (`bearer`, token cache off)', 'bearer-rs-dpop', 'bearer-rs', undefined],
  ]) {
    console.log(
      `${name}: req/s ${per(mode, against)} (median ${fixed(medianOf((r) => r[mode].rps / r[against].rps))}); by CPU per request ${cpu(mode, against)}; ${target === undefined ? 'no target' : `target ≥ ${target}`}`,
    )
  }
} finally {
  for (const { child } of servers) child.kill('SIGTERM')
}
