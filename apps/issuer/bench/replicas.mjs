// `pnpm bench`, part 2: the refresh grant (HS256, rotation on) with one and with two issuer
// replicas on PostgreSQL, against one issuer on SQLite, in one run, as ratios. The first
// replica is pinned to core 0 as in run.mjs; a second replica needs a core of its own, and on a
// 2-core machine the only other one is core 1, which it then shares with this load generator
// and PostgreSQL (not pinned): read the two-replica ratio as a lower bound.
// Environment: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 10, rounded up to even),
// TESSERA_TEST_POSTGRES_URL (the server to create a throwaway database on).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createTestDatabase } from '@tessera/test-support'
import autocannon from 'autocannon'
import { cpuSeconds, hasTaskset, pinLoadGenerator, refreshScenario, startServer } from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
pinLoadGenerator()

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = 2 * Math.ceil(Number(process.env.BENCH_CONNECTIONS ?? 10) / 2)
const HOST = 'hs.bench'
const CLIENT = '0b0b0b0b-0000-4000-8000-000000000001'
const CLI = join(here, '..', 'dist', 'cli', 'main.js')

/**
 * Starts `tessera dev` on `databaseUrl`, pinned to `core` (0 or 1). startServer pins to core 0;
 * for core 1 the command is wrapped in a second taskset, which runs last and so decides.
 */
async function issuer(databaseUrl, core) {
  const args = [process.execPath, CLI, 'dev', '--port', '0']
  const { url, child } = await startServer(
    core === 0 || !hasTaskset ? args : ['taskset', '-c', String(core), ...args],
    {
      JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
      TESSERA_CONFIG: join(here, 'fixtures'),
      DATABASE_URL: databaseUrl,
    },
    (line) => line.msg === 'tessera issuer listening' && line.url,
  )
  return { url, child }
}

/** The refresh grant against every replica at once (autocannon spreads connections over urls). */
async function measure(name, replicas) {
  const scenario = await refreshScenario(replicas[0].url, HOST, CLIENT, CONNECTIONS)
  const options = {
    ...scenario,
    url: replicas.map((replica) => `${replica.url}/token`),
    connections: CONNECTIONS,
  }
  await autocannon({ ...options, duration: 2 })
  const cpuBefore = replicas.map((replica) => cpuSeconds(replica.child.pid))
  const result = await autocannon({ ...options, duration: SECONDS })
  const cpu = replicas.map((replica, i) => {
    const after = cpuSeconds(replica.child.pid)
    return after === undefined || cpuBefore[i] === undefined ? undefined : after - cpuBefore[i]
  })
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${name}: ${bad} requests failed (non-2xx, errors or timeouts)`)
  const busy = cpu.every((seconds) => seconds !== undefined)
    ? cpu.map((seconds) => `${Math.round((100 * seconds) / SECONDS)}%`).join(' + ')
    : 'n/a'
  return { name, rps: result.requests.average, p99: result.latency.p99, busy }
}

const tmp = mkdtempSync(join(tmpdir(), 'tessera-bench-replicas-'))
const database = await createTestDatabase()
const children = []
const rows = []
try {
  const sqlite = await issuer(`sqlite:${join(tmp, 'bench.db')}`, 0)
  children.push(sqlite.child)
  rows.push(await measure('1 issuer, SQLite', [sqlite]))
  sqlite.child.kill('SIGTERM')

  const first = await issuer(database.url, 0)
  children.push(first.child)
  rows.push(await measure('1 replica, PostgreSQL', [first]))
  const second = await issuer(database.url, 1)
  children.push(second.child)
  rows.push(await measure('2 replicas, PostgreSQL', [first, second]))
} finally {
  for (const child of children) child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
  rmSync(tmp, { recursive: true, force: true })
}

const base = rows[0].rps
console.log(
  `\nReplicas: refresh grant, HS256, rotation on; ${SECONDS} s per scenario, ${CONNECTIONS} connections` +
    `${hasTaskset ? '' : ' (taskset missing: not pinned)'}\n`,
)
console.log('| scenario | req/s | p99 ms | issuer CPU | vs 1 issuer on SQLite |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const row of rows) {
  console.log(
    `| ${row.name} | ${Math.round(row.rps)} | ${row.p99} | ${row.busy} | ${(row.rps / base).toFixed(2)} |`,
  )
}
const [, one, two] = rows
console.log(`\n2 replicas / 1 replica on PostgreSQL: ${(two.rps / one.rps).toFixed(2)}`)
