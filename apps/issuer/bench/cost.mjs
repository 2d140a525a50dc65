// `node bench/cost.mjs [main.js …]`: CPU time the issuer spends per request, in microseconds, for
// each scenario of `pnpm bench`. CPU time per request hardly moves when other work shares the
// machine, where req/s does; use it to compare builds A/B on a busy machine: give the `dist/cli/
// main.js` of each build (default: this one). Each build gets its own server and SQLite file;
// scenarios alternate between builds for BENCH_ROUNDS rounds and the median is reported.
// Environment: BENCH_SECONDS (default 4), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default
// 10), BENCH_SCENARIOS (comma-separated names; default all), BENCH_PROFILE (a directory: the
// issuers run with --cpu-prof and write their profiles there on exit).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { median } from '@tessera/test-support'
import {
  cpuSeconds,
  mainThreadSeconds,
  pinLoadGenerator,
  refreshScenario,
  startServer,
  userSystemSeconds,
} from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
pinLoadGenerator()

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const PROFILE = process.env.BENCH_PROFILE
const HS = '0b0b0b0b-0000-4000-8000-000000000001'
const RS = '0b0b0b0b-0000-4000-8000-000000000002'
const builds = process.argv.slice(2).map((path) => resolve(path))
if (builds.length === 0) builds.push(join(here, '..', 'dist', 'cli', 'main.js'))

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
const json = { 'content-type': 'application/json' }
const scenarios = {
  'bare-koa': async (url) => ({
    url: `${url}/token`,
    method: 'POST',
    headers: json,
    body: password(HS),
  }),
  'hs-password': async (url) => ({
    url: `${url}/token`,
    method: 'POST',
    headers: { ...json, host: 'hs.bench' },
    body: password(HS),
  }),
  'hs-refresh': (url) => refreshScenario(url, 'hs.bench', HS, CONNECTIONS),
  'rs-refresh': (url) => refreshScenario(url, 'rs.bench', RS, CONNECTIONS),
  'rs-password': async (url) => ({
    url: `${url}/token`,
    method: 'POST',
    headers: { ...json, host: 'rs.bench' },
    body: password(RS),
  }),
  'hs-cc': async (url) => ({
    url: `${url}/token`,
    method: 'POST',
    headers: { ...json, host: 'hs.bench' },
    body: clientCredentials(HS),
  }),
  'rs-cc': async (url) => ({
    url: `${url}/token`,
    method: 'POST',
    headers: { ...json, host: 'rs.bench' },
    body: clientCredentials(RS),
  }),
}
const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(scenarios).join(',')).split(',')

const children = []
const tmp = mkdtempSync(join(tmpdir(), 'tessera-cost-'))
try {
  const servers = [
    {
      name: 'bare Koa',
      only: 'bare-koa',
      ...(await startServer([process.execPath, join(here, 'baseline-koa.mjs')], {}, (l) => l.url)),
    },
  ]
  for (const [index, main] of builds.entries()) {
    const flags = PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`, '--cpu-prof-interval=100']
      : []
    servers.push({
      name: `build ${index}`,
      ...(await startServer(
        [process.execPath, ...flags, main, 'dev', '--port', '0'],
        {
          JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
          TESSERA_CONFIG: join(here, 'fixtures'),
          DATABASE_URL: `sqlite:${join(tmp, `bench-${index}.db`)}`,
          PASSWORD_MAX_FAILURES: '1000000',
          PASSWORD_MAX_FAILURES_PER_ADDRESS: '1000000',
        },
        (line) => line.msg === 'tessera issuer listening' && line.url,
      )),
    })
  }
  for (const server of servers) children.push(server.child)

  const results = new Map()
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of chosen) {
      for (const server of servers) {
        // The bare Koa server answers its own scenario only; the issuers every other one.
        if (server.only === undefined ? name === 'bare-koa' : server.only !== name) continue
        const options = { ...(await scenarios[name](server.url)), connections: CONNECTIONS }
        if (round === 0) await autocannon({ ...options, duration: 1 })
        const pid = server.child.pid
        const before = {
          cpu: cpuSeconds(pid),
          split: userSystemSeconds(pid),
          main: mainThreadSeconds(pid),
          at: performance.now(),
        }
        const result = await autocannon({ ...options, duration: SECONDS })
        const after = {
          cpu: cpuSeconds(pid),
          split: userSystemSeconds(pid),
          main: mainThreadSeconds(pid),
          at: performance.now(),
        }
        const bad = result.non2xx + result.errors + result.timeouts
        if (bad > 0) throw new Error(`${server.name} ${name}: ${bad} requests failed`)
        const key = `${name}\t${server.name}`
        const list = results.get(key) ?? []
        const perRequest = (seconds) => (seconds * 1e6) / result.requests.total
        const wall = (after.at - before.at) / 1000
        list.push({
          us: perRequest(after.cpu - before.cpu),
          system: perRequest(after.split.system - before.split.system),
          mainThread: perRequest(after.main.run - before.main.run),
          // Neither running nor waiting for the CPU: blocked (I/O, locks) or idle.
          blocked: perRequest(
            wall - (after.main.run - before.main.run) - (after.main.wait - before.main.wait),
          ),
          rps: result.requests.average,
        })
        results.set(key, list)
      }
    }
  }
  const show = (values) => values.map((value) => value.toFixed(0)).join(' ')
  console.log(
    '| scenario | server | CPU µs/request | rounds | of which system | of which main thread | main thread blocked or idle, µs/request | rounds | req/s |',
  )
  console.log('|---|---|---:|---|---:|---:|---:|---|---:|')
  for (const [key, list] of results) {
    const [name, server] = key.split('\t')
    const us = list.map((r) => r.us)
    const blocked = list.map((r) => r.blocked)
    console.log(
      `| ${name} | ${server} | ${median(us).toFixed(0)} | ${show(us)} | ${median(list.map((r) => r.system)).toFixed(0)} | ${median(list.map((r) => r.mainThread)).toFixed(0)} | ${median(blocked).toFixed(0)} | ${show(blocked)} | ${median(list.map((r) => r.rps)).toFixed(0)} |`,
    )
  }
} finally {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((done) => {
          if (child.exitCode !== null) return done()
          child.once('exit', done)
          child.kill('SIGTERM')
        }),
    ),
  )
  rmSync(tmp, { recursive: true, force: true })
}
