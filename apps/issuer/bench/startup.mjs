// `pnpm bench`, part 3: start-up with many tenants. For each tenant count (1,000 and 10,000 by
// default), tenant files from tenants.mjs (half RS256, two clients each, one shared provider):
// `tessera start` on an empty SQLite database (cold), then again on the same one (warm: keys are
// made on first use, so it holds next to none), then once every RS256 tenant has its key stored
// (warm, keys: what a long-running deployment restarts on). Those keys are one generated pair
// stored for every tenant, in plaintext; a start seals them (it is run and left out first). Measured
// from the spawn: until it logs that it listens, until a first token of an HS256 tenant and of
// an RS256 tenant; its RSS when listening, and its peak RSS (VmHWM) by the time it is stopped.
// Each start is stopped once it has stored the parse results of the files it had to parse
// (docs/configuration.md, Starting with many files), so the warm starts parse no YAML and the
// peak includes that storing. RSS per tenant is the difference between the
// largest and the smallest count, divided by the difference in tenants, so that what the process
// holds whatever the count cancels out. The issuer is pinned to core 0 as in run.mjs, unless
// BENCH_STARTUP_PIN=0.
// Environment: BENCH_STARTUP_COUNTS (default "1000,10000"), BENCH_STARTUP_RS256 (the share of
// RS256 tenants, default 0.5), BENCH_STARTUP_TIMEOUT_SECONDS (per start, default 180: a start
// that takes longer is reported as such).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateRsaKey, kidForDate } from '@tessera/keys'
import { openStore } from '@tessera/store'
import { call, hasTaskset, pinned } from './lib.mjs'
import {
  CLIENT_SECRET,
  clientId,
  isRs256,
  tenantHost,
  tenantName,
  writeTenants,
} from './tenants.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const CLI = join(here, '..', 'dist', 'cli', 'main.js')
const COUNTS = (process.env.BENCH_STARTUP_COUNTS ?? '1000,10000').split(',').map(Number)
const RS256 = Number(process.env.BENCH_STARTUP_RS256 ?? 0.5)
const TIMEOUT_MS = Number(process.env.BENCH_STARTUP_TIMEOUT_SECONDS ?? 180) * 1000
const PIN = process.env.BENCH_STARTUP_PIN !== '0'

/** Stores an active key for every RS256 tenant of `count`: one pair, copied. */
async function seedKeys(databaseUrl, count) {
  const store = await openStore(databaseUrl)
  try {
    const now = Date.now()
    const pair = await generateRsaKey('bench', kidForDate(now), now)
    for (let index = 0; index < count; index++) {
      if (isRs256(index, RS256))
        await store.keys.insertKeyIfAbsent({ ...pair, tenant: tenantName(index) })
    }
  } finally {
    await store.close()
  }
}

/** Resident set size (or its peak, `VmHWM`) of a process in MB, from /proc; undefined without it. */
function rssMb(pid, field = 'VmRSS') {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    )?.[1]
    return kb === undefined ? undefined : Number(kb) / 1024
  } catch {
    return undefined
  }
}

/** A password grant at tenant `index`; resolves with the HTTP status. */
async function token(url, index) {
  const response = await call(`${url}/token`, {
    method: 'POST',
    host: tenantHost(index),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'password',
      username: 'bench',
      password: 'bench',
      client_id: clientId(index, 0),
      client_secret: CLIENT_SECRET,
    }),
  })
  if (response.status !== 200) throw new Error(`token at tenant ${index}: ${response.status}`)
}

/** One `tessera start`: milliseconds to listening and to each first token, RSS when listening, peak RSS. */
async function start(config, databaseUrl, count) {
  const began = performance.now()
  const args = [process.execPath, CLI, 'start', '--port', '0']
  const [command, argv] = PIN ? pinned(args) : [args[0], args.slice(1)]
  const child = spawn(command, argv, {
    env: {
      ...process.env,
      TESSERA_CONFIG: config,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
      KEY_ENCRYPTION_SECRET: 'bench-key-encryption-secret-0123456789abcdef',
      ADMIN_PORT: 'off',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  // Parse results a start missed are stored a second after it: a process stopped before would
  // leave the next start as cold as this one.
  let markStored
  const stored = new Promise((resolve) => (markStored = resolve))
  let caching = false
  try {
    const url = await new Promise((resolve, reject) => {
      let buffered = ''
      const timer = setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS)
      child.stdout.on('data', (chunk) => {
        buffered += chunk
        let newline
        while ((newline = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, newline)
          buffered = buffered.slice(newline + 1)
          // The listening line names every tenant: only its start is looked at.
          if (line.includes('"msg":"tessera issuer listening"')) {
            clearTimeout(timer)
            resolve(/"url":"([^"]+)"/.exec(line)[1])
          }
          if (line.includes('"msg":"tenant files read; parse results from the database"')) {
            caching = true
          }
          if (line.includes('"msg":"parse results of tenant files stored"')) markStored()
        }
      })
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)))
    })
    const listening = performance.now() - began
    const rss = rssMb(child.pid)
    // The first tenant is HS256 and the second RS256 whenever the share is strictly between 0 and 1.
    const hs = [0, 1, 2].find((index) => !isRs256(index, RS256))
    const rs = [0, 1, 2].find((index) => isRs256(index, RS256))
    let hsToken
    let rsToken
    if (hs !== undefined && hs < count) {
      await token(url, hs)
      hsToken = performance.now() - began
    }
    if (rs !== undefined && rs < count) {
      await token(url, rs)
      rsToken = performance.now() - began
    }
    if (caching) {
      const storedBy = new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS).unref())
      await Promise.race([stored, storedBy])
    }
    // The peak covers the whole run: the first tokens, and storing the parse results.
    const peak = rssMb(child.pid, 'VmHWM')
    return { listening, hsToken, rsToken, rss, peak }
  } catch (error) {
    if (error.message === 'timeout') return { timedOut: true }
    throw error
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) =>
      child.exitCode === null ? child.once('exit', resolve) : resolve(),
    )
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'tessera-startup-'))
const rows = []
try {
  for (const count of COUNTS) {
    const config = join(tmp, `tenants-${count}`)
    const rs = writeTenants(config, { count, rs256: RS256 })
    const databaseUrl = `sqlite:${join(tmp, `startup-${count}.db`)}`
    for (const database of ['cold', 'warm', 'seed', 'warm, keys']) {
      if (database === 'seed') {
        await seedKeys(databaseUrl, count)
        // This start seals the seeded keys (a write per key): not what a restart does.
        await start(config, databaseUrl, count)
        continue
      }
      const result = await start(config, databaseUrl, count)
      rows.push({ count, rs, database, ...result })
      process.stderr.write(`${count} tenants, ${database}: ${JSON.stringify(result)}\n`)
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

const ms = (value) => (value === undefined ? '—' : `${Math.round(value)}`)
const timeout = `> ${TIMEOUT_MS / 1000} s`
const mb = (value) => (value === undefined ? '—' : value.toFixed(0))
console.log(
  `\nTessera start-up: tenant files from bench/tenants.mjs (${RS256 * 100}% RS256, 2 clients each), SQLite, ${PIN ? `server on core 0${hasTaskset ? '' : ' (taskset missing: not pinned)'}` : 'server not pinned'}; one run, ms from the spawn\n`,
)
console.log(
  '| tenants | RS256 | database | listening ms | first HS256 token ms | first RS256 token ms | RSS MB | peak RSS MB |',
)
console.log('|---:|---:|---|---:|---:|---:|---:|---:|')
for (const row of rows) {
  if (row.timedOut) {
    console.log(`| ${row.count} | ${row.rs} | ${row.database} | ${timeout} | | | | |`)
    continue
  }
  console.log(
    `| ${row.count} | ${row.rs} | ${row.database} | ${ms(row.listening)} | ${ms(row.hsToken)} | ${ms(row.rsToken)} | ${mb(row.rss)} | ${mb(row.peak)} |`,
  )
}
const measured = rows.filter((row) => row.database === 'cold' && row.rss !== undefined)
if (measured.length >= 2) {
  const small = measured[0]
  const large = measured[measured.length - 1]
  const perTenant = ((large.rss - small.rss) * 1024) / (large.count - small.count)
  console.log(
    `\nRSS per tenant (cold, ${small.count} to ${large.count} tenants): ${perTenant.toFixed(1)} KB`,
  )
  console.log(
    `listening, ${large.count} vs ${small.count} tenants (cold): ${(large.listening / small.listening).toFixed(2)}×`,
  )
}
