// Helpers shared by the benchmark scripts: pinned servers, loopback calls with a Host header,
// pools of live refresh tokens (the issuer's and node-oidc-provider's), and the CPU time a process
// has used.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'

export const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0

/**
 * Re-runs this script pinned to core 1 (the load generator's core) unless it already is;
 * returns only in the pinned process.
 */
export function pinLoadGenerator() {
  if (hasTaskset && process.env.BENCH_LOADGEN_PINNED !== '1') {
    const result = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_LOADGEN_PINNED: '1' },
    })
    process.exit(result.status ?? 1)
  }
}

/** `[command, args]` that runs `args` pinned to core 0 when taskset exists. */
export const pinned = (args) =>
  hasTaskset ? ['taskset', ['-c', '0', ...args]] : [args[0], args.slice(1)]

/**
 * Starts a server pinned to core 0 and resolves with `{ url, child }` once `pick` finds its URL
 * in a JSON line of its stdout.
 */
export function startServer(args, env, pick) {
  const [command, argv] = pinned(args)
  const child = spawn(command, argv, {
    // No admin listener: several servers run side by side (and older builds ignore it).
    env: { ...process.env, ADMIN_PORT: 'off', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
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
            resolve({ url, child })
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

/** One HTTP request with a chosen Host header (fetch cannot set one). */
export function call(url, { method = 'GET', host, headers = {}, body } = {}) {
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
export async function refreshTokenFor(issuerUrl, host, clientId) {
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
      client_secret: 'bench-secret-0123',
    }),
  })
  return JSON.parse(tokens.text).refresh_token
}

/**
 * The refresh grant with rotation on. A token is good for one use, so requests draw live tokens
 * from a pool and each response puts its new refresh token back (autocannon resets a
 * connection's context between requests, so chains cannot live there).
 */
export async function refreshScenario(issuerUrl, host, clientId, connections) {
  const pool = []
  for (let i = 0; i < 2 * connections; i++) {
    pool.push(await refreshTokenFor(issuerUrl, host, clientId))
  }
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
            client_secret: 'bench-secret-0123',
          }),
        }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(JSON.parse(body).refresh_token)
        },
      },
    ],
  }
}

// CPU time of a process, all threads: shared with the verifier's benchmark.
export { cpuSeconds } from '@tessera/test-support'

/**
 * The main thread of a process: seconds it has run and seconds it has waited, runnable, for a
 * CPU (taken by other processes), from /proc/PID/task/PID/schedstat; undefined without /proc.
 * Wall time less both is the time the thread was blocked: waiting on I/O or a lock, or idle.
 */
export function mainThreadSeconds(pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')
    return { run: Number(run) / 1e9, wait: Number(wait) / 1e9 }
  } catch {
    return undefined
  }
}

/**
 * User and system CPU seconds of a process, all threads, from /proc/PID/stat (clock ticks, at
 * the usual 100 per second); undefined without /proc.
 */
export function userSystemSeconds(pid) {
  try {
    // The command name, in parentheses, may hold spaces: count fields after its closing one.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
  } catch {
    return undefined
  }
}

/** node-oidc-provider's bench clients (oidc-provider.mjs): RS256 refresh and HS256 client_credentials. */
export const OIDC_RS = 'bench-rs-client'
export const OIDC_HS = 'bench-hs-client'
export const OIDC_SECRET = 'bench-secret-0123456789-abcdefghijklmnop'

/**
 * node-oidc-provider's refresh grant with rotation, drawn from a pool as `refreshScenario` draws
 * on the issuer's. Its token endpoint takes form bodies, and its client authenticates with
 * client_secret_post, as the issuer's bench clients do with their secret in the body.
 */
export async function oidcRefreshScenario(url, connections) {
  const pool = []
  for (let i = 0; i < 2 * connections; i++) {
    const minted = await call(`${url}/bench/refresh-token`, {
      method: 'POST',
      host: 'oidc.bench',
      body: JSON.stringify({ client_id: OIDC_RS }),
    })
    pool.push(JSON.parse(minted.text).refresh_token)
  }
  return {
    url: `${url}/token`,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (req) => ({
          ...req,
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: pool.shift(),
            client_id: OIDC_RS,
            client_secret: OIDC_SECRET,
          }).toString(),
        }),
        onResponse: (status, body) => {
          if (status === 200) pool.push(JSON.parse(body).refresh_token)
        },
      },
    ],
  }
}
