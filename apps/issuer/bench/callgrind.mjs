// `node bench/callgrind.mjs [main.js …]` (after `pnpm build`; needs valgrind): instructions the
// issuer executes per request, counted by callgrind, for each build given (default: this one),
// next to a bare Koa route (baseline-koa.mjs). Instruction counts do not move when other work
// shares the machine, where time does: use this to compare builds on a busy machine.
// Each server runs under `valgrind --tool=callgrind` and gets, over one keep-alive loopback
// connection, one request at a time: BENCH_WARMUP requests (default 500), then its counters are
// zeroed (callgrind_control), then BENCH_REQUESTS requests (default 2000), then its counters are
// dumped and read. Start-up and warm-up are so left out. The issuer's scenario is the HS256
// refresh grant with rotation: each answer's refresh token is the next request's. Several
// invocations may run side by side, one build each, with BENCH_BASELINE=0 on all but one (no bare
// Koa run). Environment: BENCH_WARMUP, BENCH_REQUESTS, BENCH_BASELINE.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { refreshTokenFor, startServer } from './lib.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
const HS = '0b0b0b0b-0000-4000-8000-000000000001'
const builds = process.argv.slice(2).map((path) => resolve(path))
if (builds.length === 0) builds.push(join(here, '..', 'dist', 'cli', 'main.js'))

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** One POST of a JSON body on the shared keep-alive connection; resolves with status and JSON. */
function post(url, host, body) {
  const target = new URL(url)
  const payload = JSON.stringify(body)
  return new Promise((done, fail) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: {
          host,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => {
          if (res.statusCode !== 200) fail(new Error(`${url}: ${res.statusCode} ${text}`))
          else done(JSON.parse(text))
        })
      },
    )
    req.on('error', fail)
    req.end(payload)
  })
}

function control(pid, ...args) {
  const result = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`callgrind_control ${args}: ${result.stderr}`)
}

/** The Ir total of the one dump callgrind has written in `dir` besides the exit file. */
function dumpedInstructions(dir, pid) {
  const dumps = readdirSync(dir).filter((name) => name.startsWith(`out.${pid}.`))
  if (dumps.length !== 1) throw new Error(`expected one callgrind dump, found ${dumps}`)
  const text = readFileSync(join(dir, dumps[0]), 'utf8')
  const totals = /^(?:summary|totals): (\d+)/m.exec(text)
  if (totals === null) throw new Error('no totals in the callgrind dump')
  return Number(totals[1])
}

async function measure(name, args, env, pick, send) {
  const dir = mkdtempSync(join(tmpdir(), 'issuer-callgrind-'))
  const { child, url } = await startServer(
    ['valgrind', '--tool=callgrind', `--callgrind-out-file=${join(dir, 'out.%p')}`, ...args],
    env,
    pick,
  )
  try {
    const next = await send(url)
    for (let i = 0; i < WARMUP; i++) await next()
    control(child.pid, '--zero')
    for (let i = 0; i < REQUESTS; i++) await next()
    control(child.pid, '--dump')
    return Math.round(dumpedInstructions(dir, child.pid) / REQUESTS)
  } finally {
    await new Promise((done) => {
      if (child.exitCode !== null) return done()
      child.once('exit', done)
      child.kill('SIGTERM')
    })
    rmSync(dir, { recursive: true, force: true })
    process.stderr.write(`${name} done\n`)
  }
}

const password = { grant_type: 'password', username: 'bench', password: 'bench', client_id: HS }
const rows = []
if (process.env.BENCH_BASELINE !== '0')
  rows.push([
    'bare Koa, JSON body',
    await measure(
      'bare Koa',
      [process.execPath, join(here, 'baseline-koa.mjs')],
      {},
      (line) => line.url,
      async (url) => () => post(`${url}/token`, 'bare', { ...password, client_secret: 'x' }),
    ),
  ])
for (const main of builds) {
  const tmp = mkdtempSync(join(tmpdir(), 'issuer-callgrind-db-'))
  try {
    const ir = await measure(
      main,
      [process.execPath, main, 'dev', '--port', '0'],
      {
        JWT_SECRET: 'bench-secret-0123456789-abcdefghijklmnop',
        TESSERA_CONFIG: join(here, 'fixtures'),
        DATABASE_URL: `sqlite:${join(tmp, 'bench.db')}`,
      },
      (line) => line.msg === 'tessera issuer listening' && line.url,
      async (url) => {
        let refreshToken = await refreshTokenFor(url, 'hs.bench', HS)
        return async () => {
          const answer = await post(`${url}/token`, 'hs.bench', {
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            client_id: HS,
            client_secret: 'bench-secret-0123',
          })
          refreshToken = answer.refresh_token
        }
      },
    )
    rows.push([`${main}, HS256 refresh`, ir])
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}
agent.destroy()
console.log(`| server, scenario | Ir per request (${REQUESTS} requests after ${WARMUP}) |`)
console.log('|---|---:|')
for (const [name, ir] of rows) console.log(`| ${name} | ${ir} |`)
