// `pnpm bench`: throughput of the issuer on loopback, reported as ratios to baselines measured
// in the same run. The measured server is pinned to core 0 and this load generator to core 1
// (taskset), so the two do not fight over one core. Environment: BENCH_SECONDS (default 8),
// BENCH_CONNECTIONS (default 10).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { hasTaskset, pinLoadGenerator, pinned, refreshScenario, startServer } from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
pinLoadGenerator()

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const children = []

/** Starts a server pinned to core 0 and resolves with its URL; stopped at the end. */
async function start(args, env, pick) {
  const { url, child } = await startServer(args, env, pick)
  children.push(child)
  return url
}

async function load(name, options) {
  // A short warm-up lets V8 optimise before the measured run.
  await autocannon({ ...options, connections: CONNECTIONS, duration: 2 })
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: SECONDS })
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${name}: ${bad} requests failed (non-2xx, errors or timeouts)`)
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

const tmp = mkdtempSync(join(tmpdir(), 'tessera-bench-'))
try {
  const issuerUrl = await start(
    [process.execPath, join(here, '..', 'dist', 'cli', 'main.js'), 'dev', '--port', '0'],
    {
      JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
      TESSERA_CONFIG: join(here, 'fixtures'),
      DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
      PASSWORD_MAX_FAILURES: '1000000',
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '1000000',
    },
    (line) => line.msg === 'tessera issuer listening' && line.url,
  )
  const baselineUrl = await start(
    [process.execPath, join(here, 'baseline-koa.mjs')],
    {},
    (line) => line.url,
  )

  const json = { 'content-type': 'application/json' }
  const password = (clientId) =>
    JSON.stringify({
      grant_type: 'password',
      username: 'bench',
      password: 'bench',
      client_id: clientId,
      client_secret: 'bench-secret',
    })

  const rows = []
  const baseline = await load('bare Koa JSON route (baseline)', {
    url: `${baselineUrl}/token`,
    method: 'POST',
    headers: json,
    body: password('0b0b0b0b-0000-4000-8000-000000000001'),
  })
  rows.push(baseline)
  rows.push(
    await load('password grant, HS256', {
      url: `${issuerUrl}/token`,
      method: 'POST',
      headers: { ...json, host: 'hs.bench' },
      body: password('0b0b0b0b-0000-4000-8000-000000000001'),
    }),
  )
  rows.push(
    await load(
      'refresh grant, HS256 (rotation, SQLite)',
      await refreshScenario(
        issuerUrl,
        'hs.bench',
        '0b0b0b0b-0000-4000-8000-000000000001',
        CONNECTIONS,
      ),
    ),
  )
  const rsRefresh = await load(
    'refresh grant, RS256 (rotation, SQLite)',
    await refreshScenario(
      issuerUrl,
      'rs.bench',
      '0b0b0b0b-0000-4000-8000-000000000002',
      CONNECTIONS,
    ),
  )
  rows.push(rsRefresh)
  const rsPassword = await load('password grant, RS256', {
    url: `${issuerUrl}/token`,
    method: 'POST',
    headers: { ...json, host: 'rs.bench' },
    body: password('0b0b0b0b-0000-4000-8000-000000000002'),
  })
  rows.push(rsPassword)
  rows.push(
    await load('GET /.well-known/jwks.json', {
      url: `${issuerUrl}/.well-known/jwks.json`,
      headers: { host: 'rs.bench' },
    }),
  )

  const [command, argv] = pinned([process.execPath, join(here, 'sign-rate.mjs'), String(SECONDS)])
  const signRate = JSON.parse(spawnSync(command, argv, { encoding: 'utf8' }).stdout).perSecond

  const fmt = (n) => n.toFixed(0).padStart(7)
  console.log(
    `\nTessera benchmark: ${SECONDS} s per scenario, ${CONNECTIONS} connections, server on core 0${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`,
  )
  console.log('| scenario | req/s | p50 ms | p99 ms | vs bare Koa |')
  console.log('|---|---:|---:|---:|---:|')
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${fmt(row.rps)} | ${row.p50} | ${row.p99} | ${(row.rps / baseline.rps).toFixed(2)} |`,
    )
  }
  console.log(`| jose RS256 sign, one core (baseline) | ${fmt(signRate)} | | | |`)
  const hsRefresh = rows.find((row) => row.name.startsWith('refresh grant, HS256'))
  const ratio = (a, b) => (a / b).toFixed(2)
  console.log('')
  console.log(
    `RS256 refresh grant / jose RS256 sign rate: ${ratio(rsRefresh.rps, signRate)} (target ≥ 0.80)`,
  )
  console.log(
    `HS256 refresh grant / bare Koa JSON route:  ${ratio(hsRefresh.rps, baseline.rps)} (target ≥ 0.50)`,
  )
  console.log(`RS256 password grant / jose RS256 sign rate: ${ratio(rsPassword.rps, signRate)}`)
} finally {
  for (const child of children) child.kill('SIGTERM')
  rmSync(tmp, { recursive: true, force: true })
}
