// `pnpm bench`: throughput of the issuer on loopback, reported as ratios to baselines measured
// in the same run. The measured servers are pinned to core 0 and this load generator to core 1
// (taskset), so the two do not fight over one core. The scenarios take turns, round after round,
// each target scenario right before or after its baseline (AB, then BA), and each ratio is the
// median of the ratios measured within one round: this machine's speed drifts within seconds, and
// a scenario measured a minute after its baseline would carry that drift into its ratio. The
// issuer's CPU time per request is reported too; it hardly moves when the machine slows.
// node-oidc-provider (oidc-provider.mjs) runs in the same rounds, each of its scenarios next to
// the issuer's same grant.
// Environment: BENCH_SECONDS (per scenario and round, default 4), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 10).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { median } from '@tessera/test-support'
import {
  OIDC_HS,
  OIDC_SECRET,
  cpuSeconds,
  hasTaskset,
  oidcRefreshScenario,
  pinLoadGenerator,
  pinned,
  refreshScenario,
  startServer,
} from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
pinLoadGenerator()

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const HS = '0b0b0b0b-0000-4000-8000-000000000001'
const RS = '0b0b0b0b-0000-4000-8000-000000000002'
const children = []

/** Starts a server pinned to core 0; stopped at the end. */
async function start(args, env, pick) {
  const server = await startServer(args, env, pick)
  children.push(server.child)
  return server
}

/** One autocannon run of `seconds`: req/s, latency and the server's CPU µs per request. */
async function load(name, { server, options: makeOptions }, seconds) {
  // Made anew for each run: the refresh scenarios draw on a pool of live refresh tokens, and a
  // run ends with requests in flight whose new tokens never reach the pool.
  const options = await makeOptions()
  const before = cpuSeconds(server.child.pid)
  const statuses = {}
  const result = await autocannon({
    ...options,
    connections: CONNECTIONS,
    duration: seconds,
    setupClient: (client) =>
      client.on('response', (status) => (statuses[status] = (statuses[status] ?? 0) + 1)),
  })
  const cpu = cpuSeconds(server.child.pid) - before
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) {
    throw new Error(
      `${name}: ${bad} requests failed: statuses ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`,
    )
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    us: (cpu * 1e6) / result.requests.total,
  }
}

/** jose's signs per second on core 0 and CPU µs per sign, for `seconds` (sign-rate.mjs). */
function signRate(seconds, alg) {
  const [command, argv] = pinned([
    process.execPath,
    join(here, 'sign-rate.mjs'),
    String(seconds),
    alg,
  ])
  const run = spawnSync(command, argv, { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`sign-rate.mjs failed: ${run.stderr}`)
  const { perSecond, cpuMicros } = JSON.parse(run.stdout)
  return { rps: perSecond, us: cpuMicros }
}

const tmp = mkdtempSync(join(tmpdir(), 'tessera-bench-'))
try {
  const issuer = await start(
    [process.execPath, join(here, '..', 'dist', 'cli', 'main.js'), 'dev', '--port', '0'],
    {
      JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
      TESSERA_CONFIG: join(here, 'fixtures'),
      DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
      // The password throttle at its defaults: the load is one service user from one address,
      // whose right password is never refused, only held to PASSWORD_MAX_FAILURES in flight.
    },
    (line) => line.msg === 'tessera issuer listening' && line.url,
  )
  const bare = await start([process.execPath, join(here, 'baseline-koa.mjs')], {}, (l) => l.url)
  const oidc = await start(
    [process.execPath, join(here, 'oidc-provider.mjs'), join(tmp, 'oidc-provider.db')],
    {},
    (l) => l.url,
  )

  const json = { 'content-type': 'application/json' }
  const password = (clientId) =>
    JSON.stringify({
      grant_type: 'password',
      username: 'bench',
      password: 'bench',
      client_id: clientId,
      client_secret: 'bench-secret-0123',
    })
  const clientCredentials = (clientId) =>
    JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: 'bench-secret-0123',
    })
  const post = (server, host, body) => ({
    server,
    options: async () => ({
      url: `${server.url}/token`,
      method: 'POST',
      headers: host === undefined ? json : { ...json, host },
      body,
    }),
  })
  const scenarios = {
    bare: {
      name: 'bare Koa JSON route (baseline)',
      ...post(bare, undefined, password(HS)),
    },
    'hs-password': {
      name: 'password grant, HS256 (provider without hashing)',
      ...post(issuer, 'hs.bench', password(HS)),
    },
    'hs-refresh': {
      name: 'refresh grant, HS256 (rotation, SQLite)',
      server: issuer,
      options: () => refreshScenario(issuer.url, 'hs.bench', HS, CONNECTIONS),
    },
    'rs-refresh': {
      name: 'refresh grant, RS256 (rotation, SQLite)',
      server: issuer,
      options: () => refreshScenario(issuer.url, 'rs.bench', RS, CONNECTIONS),
    },
    'rs-password': { name: 'password grant, RS256', ...post(issuer, 'rs.bench', password(RS)) },
    'hs-cc': {
      name: 'client_credentials grant, HS256',
      ...post(issuer, 'hs.bench', clientCredentials(HS)),
    },
    'rs-cc': {
      name: 'client_credentials grant, RS256',
      ...post(issuer, 'rs.bench', clientCredentials(RS)),
    },
    jwks: {
      name: 'GET /.well-known/jwks.json',
      server: issuer,
      options: async () => ({
        url: `${issuer.url}/.well-known/jwks.json`,
        headers: { host: 'rs.bench' },
      }),
    },
    'oidc-rs-refresh': {
      name: 'node-oidc-provider refresh grant, RS256 (rotation, SQLite)',
      server: oidc,
      options: () => oidcRefreshScenario(oidc.url, CONNECTIONS),
    },
    'oidc-hs-cc': {
      name: 'node-oidc-provider client_credentials grant, HS256',
      server: oidc,
      options: async () => ({
        url: `${oidc.url}/token`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: OIDC_HS,
          client_secret: OIDC_SECRET,
        }).toString(),
      }),
    },
    sign: { name: 'jose RS256 sign, one core (baseline)', alg: 'RS256' },
    'hs-sign': { name: 'jose HS256 sign, one core (baseline)', alg: 'HS256' },
  }
  const signs = ['sign', 'hs-sign']
  const measure = (key, seconds) =>
    signs.includes(key)
      ? signRate(seconds, scenarios[key].alg)
      : load(scenarios[key].name, scenarios[key], seconds)

  // A short warm-up lets V8 optimise before the measured runs.
  for (const key of Object.keys(scenarios)) if (!signs.includes(key)) await measure(key, 2)
  // Each baseline sits between its targets, so that both are measured right next to it.
  const groups = [
    ['oidc-hs-cc', 'hs-cc', 'bare', 'hs-refresh', 'hs-sign'],
    ['rs-cc', 'sign', 'rs-refresh', 'oidc-rs-refresh'],
    ['hs-password', 'rs-password', 'jwks'],
  ]
  const rounds = []
  for (let round = 0; round < ROUNDS; round++) {
    const results = {}
    for (const group of groups) {
      for (const key of round % 2 === 0 ? group : [...group].reverse()) {
        results[key] = await measure(key, SECONDS)
        process.stderr.write(`round ${round + 1}, ${key}: ${Math.round(results[key].rps)} req/s\n`)
      }
    }
    rounds.push(results)
  }

  const medianOf = (pick) => median(rounds.map(pick))
  const fixed = (n) => n.toFixed(2)
  console.log(
    `\nTessera benchmark: ${ROUNDS} rounds of ${SECONDS} s per scenario, ${CONNECTIONS} connections, server on core 0${hasTaskset ? '' : ' (taskset missing: not pinned)'}; medians\n`,
  )
  console.log('| scenario | req/s | p50 ms | p99 ms | vs bare Koa | issuer CPU µs/request |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const [key, { name }] of Object.entries(scenarios)) {
    if (signs.includes(key)) continue
    const cell = (pick) => medianOf((r) => pick(r[key]))
    console.log(
      `| ${name} | ${cell((r) => r.rps).toFixed(0)} | ${cell((r) => r.p50)} | ${cell((r) => r.p99)} | ${fixed(medianOf((r) => r[key].rps / r.bare.rps))} | ${cell((r) => r.us).toFixed(0)} |`,
    )
  }
  for (const key of signs) {
    const { name } = scenarios[key]
    const cell = (pick) => medianOf((r) => pick(r[key])).toFixed(0)
    console.log(`| ${name} | ${cell((r) => r.rps)} | | | | ${cell((r) => r.us)} |`)
  }
  console.log('')
  /** One figure: its median over the rounds, each round's value and its target. */
  const report = (name, figure, target, unit = '') => {
    const each = rounds.map((r) => fixed(figure(r))).join(', ')
    const value = `${fixed(medianOf(figure))}${unit ? ` ${unit}` : ''}`
    console.log(`${name}: ${value} (rounds: ${each}; target ${target})`)
  }
  const rate = (key, against) => (r) => r[key].rps / r[against].rps
  report('RS256 refresh grant / jose RS256 sign rate', rate('rs-refresh', 'sign'), '≥ 0.80')
  report('HS256 refresh grant / bare Koa JSON route ', rate('hs-refresh', 'bare'), '≥ 0.50')
  report('RS256 password grant / jose RS256 sign rate', rate('rs-password', 'sign'), '—')
  report('HS256 client_credentials / bare Koa JSON route', rate('hs-cc', 'bare'), '—')
  report('RS256 client_credentials / jose RS256 sign rate', rate('rs-cc', 'sign'), '—')
  console.log(
    `HS256 refresh grant / bare Koa by CPU per request: ${fixed(medianOf((r) => r.bare.us / r['hs-refresh'].us))}`,
  )
  console.log('')
  // The grant's CPU per request less jose's CPU per signature of its algorithm, in bare Koa
  // JSON routes: what the grant costs beyond the signature no issuer can skip.
  const beyond = (name, key, sign) =>
    report(name, (r) => (r[key].us - r[sign].us) / r.bare.us, '≤ 2.0', 'bare Koa routes')
  beyond('HS256 refresh grant beyond its signature', 'hs-refresh', 'hs-sign')
  beyond('RS256 refresh grant beyond its signature', 'rs-refresh', 'sign')
  const versus = (name, key, theirs) =>
    report(name, (r) => r[key].rps / r[theirs].rps, '≥ 1.0', '× node-oidc-provider')
  versus('RS256 refresh grant / node-oidc-provider', 'rs-refresh', 'oidc-rs-refresh')
  versus('HS256 client_credentials / node-oidc-provider', 'hs-cc', 'oidc-hs-cc')
} finally {
  for (const child of children) child.kill('SIGTERM')
  rmSync(tmp, { recursive: true, force: true })
}
