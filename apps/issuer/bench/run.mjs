// `pnpm bench`: throughput of the issuer on loopback, reported as ratios to baselines measured
// in the same run. The measured server is pinned to core 0 and this load generator to core 1
// (taskset), so the two do not fight over one core. Environment: BENCH_SECONDS (default 8),
// BENCH_CONNECTIONS (default 10).
import { spawn, spawnSync } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const here = fileURLToPath(new URL('.', import.meta.url))
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0
if (hasTaskset && process.env.BENCH_LOADGEN_PINNED !== '1') {
  const result = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_LOADGEN_PINNED: '1' },
  })
  process.exit(result.status ?? 1)
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const pinned = (args) => (hasTaskset ? ['taskset', ['-c', '0', ...args]] : [args[0], args.slice(1)])
const children = []

/** Starts a server pinned to core 0 and resolves with the URL it prints (a JSON line). */
function startServer(args, env, pick) {
  const [command, argv] = pinned(args)
  const child = spawn(command, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    let buffered = ''
    const onData = (chunk) => {
      buffered += chunk
      for (const line of buffered.split('\n')) {
        try {
          const url = pick(JSON.parse(line))
          if (url) {
            // Keep draining the log so the server never blocks on a full pipe.
            child.stdout.off('data', onData)
            child.stdout.resume()
            resolve(url)
            return
          }
        } catch {
          // not a complete JSON line yet
        }
      }
    }
    child.stdout.on('data', onData)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)))
  })
}

async function load(name, options) {
  // A short warm-up lets V8 optimise before the measured run.
  await autocannon({ ...options, connections: CONNECTIONS, duration: 2 })
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: SECONDS })
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${name}: ${bad} requests failed (non-2xx, errors or timeouts)`)
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

/** One HTTP request with a chosen Host header (fetch cannot set one). */
function call(url, { method = 'GET', host, headers = {}, body } = {}) {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method,
        headers: { host, ...headers },
        agent: false,
      },
      (res) => {
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Signs the bench user in through /authorize and redeems the code: a fresh refresh token. */
async function refreshTokenFor(issuerUrl, host, clientId) {
  const redirectUri = 'http://localhost:9999/cb'
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    state: 's',
  })
  const page = await call(`${issuerUrl}/authorize?${query}`, { host })
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)[1]
  const cookie = page.headers['set-cookie'][0].split(';')[0]
  const login = await call(`${issuerUrl}/authorize`, {
    method: 'POST',
    host,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({
      csrf_token: csrf,
      username: 'bench',
      password: 'bench',
    }).toString(),
  })
  const code = new URL(login.headers.location).searchParams.get('code')
  const tokens = await call(`${issuerUrl}/token`, {
    method: 'POST',
    host,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      client_secret: 'bench-secret',
    }),
  })
  return JSON.parse(tokens.text).refresh_token
}

/**
 * The refresh grant with rotation on. A token is good for one use, so requests draw live tokens
 * from a pool and each response puts its new refresh token back (autocannon resets a
 * connection's context between requests, so chains cannot live there).
 */
async function refreshScenario(issuerUrl, host, clientId) {
  const pool = []
  for (let i = 0; i < 2 * CONNECTIONS; i++)
    pool.push(await refreshTokenFor(issuerUrl, host, clientId))
  return {
    url: `${issuerUrl}/token`,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', host },
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            grant_type: 'refresh_token',
            refresh_token: pool.shift(),
            client_id: clientId,
            client_secret: 'bench-secret',
          }),
        }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(JSON.parse(body).refresh_token)
        },
      },
    ],
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'tessera-bench-'))
try {
  const issuerUrl = await startServer(
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
  const baselineUrl = await startServer(
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
      await refreshScenario(issuerUrl, 'hs.bench', '0b0b0b0b-0000-4000-8000-000000000001'),
    ),
  )
  const rsRefresh = await load(
    'refresh grant, RS256 (rotation, SQLite)',
    await refreshScenario(issuerUrl, 'rs.bench', '0b0b0b0b-0000-4000-8000-000000000002'),
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
