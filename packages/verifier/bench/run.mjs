// `pnpm --filter @tessera/verifier bench`: req/s of one Koa route, unprotected, behind this
// package's `bearer` (HS256; RS256 with the token cache off and on) and behind a bare jose
// `jwtVerify` middleware (the baseline), all in one run, printed as a Markdown table of ratios.
// Each server is pinned to core 0 and the load generator to core 1 (taskset) when possible.
// Environment: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 10).
import { spawn, spawnSync } from 'node:child_process'
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

function start(mode) {
  const args = [`${here}server.mjs`, mode]
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

async function measure(mode) {
  const { child, url, token } = await start(mode)
  try {
    const options = {
      url: `${url}/orders`,
      connections: CONNECTIONS,
      headers: { authorization: `Bearer ${token}` },
    }
    // A short warm-up lets V8 optimise before the measured run.
    await autocannon({ ...options, duration: 2 })
    const result = await autocannon({ ...options, duration: SECONDS })
    const bad = result.non2xx + result.errors + result.timeouts
    if (bad > 0) throw new Error(`${mode}: ${bad} requests failed`)
    return { mode, rps: result.requests.average, p99: result.latency.p99 }
  } finally {
    child.kill('SIGTERM')
  }
}

const modes = ['open', 'jose-hs', 'bearer-hs', 'jose-rs', 'bearer-rs', 'bearer-rs-cached']
const results = {}
for (const mode of modes) {
  results[mode] = await measure(mode)
  process.stderr.write(`${mode}: ${Math.round(results[mode].rps)} req/s\n`)
}
const baseline = {
  open: 'open',
  'jose-hs': 'jose-hs',
  'bearer-hs': 'jose-hs',
  'jose-rs': 'jose-rs',
  'bearer-rs': 'jose-rs',
  'bearer-rs-cached': 'jose-rs',
}
const label = {
  open: 'unprotected route',
  'jose-hs': 'jose jwtVerify, HS256 (baseline)',
  'bearer-hs': '`bearer`, HS256',
  'jose-rs': 'jose jwtVerify, RS256 (baseline)',
  'bearer-rs': '`bearer`, RS256, token cache off',
  'bearer-rs-cached': '`bearer`, RS256, token cache on',
}
const ratio = (a, b) => (a / b).toFixed(2)
console.log(`\n${CONNECTIONS} connections, ${SECONDS} s per case, Node ${process.version}\n`)
console.log('| case | req/s | p99 ms | vs unprotected | vs jose baseline |')
console.log('|---|---:|---:|---:|---:|')
for (const mode of modes) {
  const { rps, p99 } = results[mode]
  console.log(
    `| ${label[mode]} | ${Math.round(rps)} | ${p99} | ${ratio(rps, results.open.rps)} | ${mode === 'open' ? '—' : ratio(rps, results[baseline[mode]].rps)} |`,
  )
}
