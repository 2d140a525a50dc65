import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * @tessera/test-support — helpers the workspace's integration tests share: a real issuer as a
 * child process, a loopback fetch, and throwaway PostgreSQL databases (`createTestDatabase`, on
 * the server `TESSERA_TEST_POSTGRES_URL` names). The issuer is run from its built CLI by path, so
 * this package depends on nothing in the workspace and creates no cycle.
 *
 * @module
 */

export { TEST_POSTGRES_URL_ENV, createTestDatabase, testPostgresAdminUrl } from './postgres.js'
export type { TestDatabase, TestDatabaseOptions } from './postgres.js'
export { cpuSeconds, median } from './bench.js'
export { startTcpProxy } from './tcp-proxy.js'
export type { TcpProxy } from './tcp-proxy.js'

const ISSUER_MAIN = fileURLToPath(new URL('../../../apps/issuer/dist/cli/main.js', import.meta.url))

/** What the verifier's `fetch` option accepts. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

/** How to start an issuer. */
export interface IssuerProcessOptions {
  /** TESSERA_CONFIG: a directory of tenant YAML. */
  config: string
  /** JWT_SECRET (32+ characters). */
  jwtSecret: string
  /**
   * The port to listen on; default 0 (any free port). `dev` gives it to every tenant host
   * written without a port, in the issuer URL: a fixture whose tests expect a fixed `iss` writes
   * its hosts with a port.
   */
  port?: number
}

/** A real issuer (`tessera dev`) running as a child process on loopback. */
export interface IssuerProcess {
  /** `http://127.0.0.1:<port>` */
  url: string
  stop(): Promise<void>
}

/**
 * Starts `node apps/issuer/dist/cli/main.js dev --port 0` (or `options.port`) with its own SQLite file and resolves
 * once it prints its `tessera issuer listening` line. Needs the issuer built (turbo does that
 * before this package's tests).
 */
export async function startIssuerProcess(options: IssuerProcessOptions): Promise<IssuerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-issuer-'))
  const port = String(options.port ?? 0)
  const child: ChildProcess = spawn(process.execPath, [ISSUER_MAIN, 'dev', '--port', port], {
    env: {
      ...process.env,
      JWT_SECRET: options.jwtSecret,
      TESSERA_CONFIG: options.config,
      DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
      LOG_LEVEL: 'info',
      // Processes started side by side must not race for the default admin port.
      ADMIN_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = ''
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8')
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string }
          if (entry.msg === 'tessera issuer listening' && typeof entry.url === 'string') {
            child.stdout?.off('data', onData)
            // Keep draining the log so the issuer never blocks on a full pipe.
            child.stdout?.resume()
            resolve(entry.url)
            return
          }
        } catch {
          // not a JSON line
        }
      }
    }
    child.stdout?.on('data', onData)
    child.once('exit', (code) => reject(new Error(`the issuer exited with ${code}: ${stderr}`)))
  })
  return { url, stop }
}

/**
 * A fetch that sends every request to the issuer on loopback and keeps the URL's host as the
 * Host header, so that `http://rs.example.test/...` reaches tenant `rs` without DNS. Built on
 * node:http: undici's fetch drops a custom Host header.
 */
export function loopbackFetch(baseUrl: string, calls: string[] = []): FetchLike {
  const target = new URL(baseUrl)
  return (url, init) => {
    calls.push(url)
    const parsed = new URL(url)
    const headers: Record<string, string> = { host: parsed.host }
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value
    })
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: init.method ?? 'GET',
          path: parsed.pathname + parsed.search,
          headers,
          agent: false,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const responseHeaders = new Headers()
            for (const [name, value] of Object.entries(res.headers)) {
              if (typeof value === 'string') responseHeaders.set(name, value)
              else if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v)
            }
            const status = res.statusCode ?? 500
            const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
            resolve(new Response(body, { status, headers: responseHeaders }))
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      const body = init.body
      if (body === undefined || body === null) req.end()
      else if (typeof body === 'string' || body instanceof URLSearchParams) req.end(body.toString())
      else reject(new TypeError('loopbackFetch: unsupported body type'))
    })
  }
}

/** An access token from the password grant of the tenant at `host` (fixture user u / p). */
export async function passwordToken(
  issuerUrl: string,
  host: string,
  client: { id: string; secret: string },
  scope?: string,
): Promise<string> {
  return requestToken(
    issuerUrl,
    host,
    { grant_type: 'password', username: 'u', password: 'p' },
    client,
    scope,
  )
}

/** An access token from the client_credentials grant of the tenant at `host`: about `client`. */
export async function clientCredentialsToken(
  issuerUrl: string,
  host: string,
  client: { id: string; secret: string },
  scope?: string,
): Promise<string> {
  return requestToken(issuerUrl, host, { grant_type: 'client_credentials' }, client, scope)
}

/** POSTs `grant` with the client's secret in the body; anything but a 200 with a token throws. */
async function requestToken(
  issuerUrl: string,
  host: string,
  grant: Record<string, string>,
  client: { id: string; secret: string },
  scope: string | undefined,
): Promise<string> {
  const response = await loopbackFetch(issuerUrl)(`http://${host}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      ...grant,
      client_id: client.id,
      client_secret: client.secret,
      ...(scope === undefined ? {} : { scope }),
    }).toString(),
  })
  const body = (await response.json()) as { access_token?: string }
  if (response.status !== 200 || typeof body.access_token !== 'string') {
    throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`)
  }
  return body.access_token
}
