// `pnpm bench`, part 3: `tessera start --workers 2` against `--workers 1` on one SQLite file, for
// the RS256 refresh grant (rotation on) and the HS256 password grant, in one run, as ratios.
// Nothing is pinned: two workers need both cores of a 2-core machine, so the issuer processes
// and this load generator (autocannon, in this process) share them; the table gives the CPU
// each side used, the issuer's being the primary's and every worker's together.
// Environment: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 16).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { cpuSeconds, refreshScenario } from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const HS = '0b0b0b0b-0000-4000-8000-000000000001'
const RS = '0b0b0b0b-0000-4000-8000-000000000002'
const CLI = join(here, '..', 'dist', 'cli', 'main.js')

/** `tessera start --workers N` on a fresh SQLite file, unpinned; resolves once it listens. */
function startIssuer(workers, dir) {
  const child = spawn(process.execPath, [CLI, 'start', '--port', '0', '--host', '127.0.0.1'], {
    env: {
      ...process.env,
      WORKERS: String(workers),
      ADMIN_PORT: 'off',
      JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
      KEY_ENCRYPTION_SECRET: randomBytes(32).toString('base64url'),
      TESSERA_CONFIG: join(here, 'fixtures'),
      DATABASE_URL: `sqlite:${join(dir, `workers-${workers}.db`)}`,
      PASSWORD_MAX_FAILURES: '1000000',
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '1000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    let buffered = ''
    const onData = (chunk) => {
      buffered += chunk
      for (const line of buffered.split('\n')) {
        try {
          const entry = JSON.parse(line)
          if (entry.msg === 'tessera issuer listening') {
            child.stdout.off('data', onData)
            child.stdout.resume()
            resolve({ url: entry.url, child })
            return
          }
        } catch {
          // not a complete JSON line yet
        }
      }
    }
    child.stdout.on('data', onData)
    child.once('exit', (code) => reject(new Error(`tessera start exited with ${code}`)))
  })
}

/** A process and its children (the workers), from /proc; just the process without /proc. */
function processTree(pid) {
  const pids = [pid]
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (children !== '') pids.push(...children.split(' ').map(Number))
    }
  } catch {
    // no /proc: the primary alone
  }
  return pids
}

const treeSeconds = (pids) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0)

/** One scenario: a 2 s warm-up, then SECONDS measured. */
async function measure(issuer, makeOptions) {
  await autocannon({ ...(await makeOptions()), connections: CONNECTIONS, duration: 2 })
  const options = await makeOptions()
  const pids = processTree(issuer.child.pid)
  const issuerBefore = treeSeconds(pids)
  const loadBefore = cpuSeconds(process.pid)
  const result = await autocannon({ ...options, connections: CONNECTIONS, duration: SECONDS })
  const issuerCpu = treeSeconds(pids) - issuerBefore
  const loadCpu = cpuSeconds(process.pid) - loadBefore
  const bad = result.non2xx + result.errors + result.timeouts
  if (bad > 0) throw new Error(`${bad} requests failed (non-2xx, errors or timeouts)`)
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    issuerCores: issuerCpu / SECONDS,
    loadCores: loadCpu / SECONDS,
    processes: pids.length,
  }
}

const scenarios = {
  'RS256 refresh grant (rotation)': (issuer) => () =>
    refreshScenario(issuer.url, 'rs.bench', RS, CONNECTIONS),
  'HS256 password grant': (issuer) => async () => ({
    url: `${issuer.url}/token`,
    method: 'POST',
    headers: { 'content-type': 'application/json', host: 'hs.bench' },
    body: JSON.stringify({
      grant_type: 'password',
      username: 'bench',
      password: 'bench',
      client_id: HS,
      client_secret: 'bench-secret-0123',
    }),
  }),
}

// Other work on the machine takes the cores these runs share: say how busy it was.
const loadBefore = loadavg()[0]
const tmp = mkdtempSync(join(tmpdir(), 'tessera-bench-workers-'))
const results = {}
try {
  for (const workers of [1, 2]) {
    const issuer = await startIssuer(workers, tmp)
    try {
      for (const [name, scenario] of Object.entries(scenarios)) {
        results[name] ??= {}
        results[name][workers] = await measure(issuer, scenario(issuer))
      }
    } finally {
      issuer.child.kill('SIGTERM')
      await new Promise((resolve) => issuer.child.once('exit', resolve))
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

const cores = (value) => value.toFixed(2)
console.log(
  `\nWorkers: tessera start --workers 2 vs --workers 1, SQLite; ${SECONDS} s per scenario, ` +
    `${CONNECTIONS} connections; nothing pinned (the load generator shares the cores); ` +
    `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after\n`,
)
console.log(
  '| scenario | workers | req/s | p99 ms | issuer CPU (cores) | load generator CPU (cores) | ×1 worker |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const [name, byWorkers] of Object.entries(results)) {
  for (const workers of [1, 2]) {
    const row = byWorkers[workers]
    console.log(
      `| ${name} | ${workers} | ${Math.round(row.rps)} | ${row.p99} | ${cores(row.issuerCores)} | ` +
        `${cores(row.loadCores)} | ${(row.rps / byWorkers[1].rps).toFixed(2)} |`,
    )
  }
}
for (const [name, byWorkers] of Object.entries(results)) {
  const perCore = (row) => row.rps / row.issuerCores
  console.log(
    `\n${name}: 2 workers / 1 worker ${(byWorkers[2].rps / byWorkers[1].rps).toFixed(2)} in req/s, ` +
      `${(perCore(byWorkers[2]) / perCore(byWorkers[1])).toFixed(2)} in req/s per issuer core`,
  )
}
