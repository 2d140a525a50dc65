import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { send } from './http.js'
import type { HttpResponse } from './http.js'
import { readLoginPage, submitLogin } from './oauth.js'

// The MCP conformance suite's `authorization` command (@modelcontextprotocol/conformance), run
// against an issuer as an operator would run it, with the browser's part played here: the suite
// prints the authorization URL and waits for the redirect to its callback server on 127.0.0.1.

const require = createRequire(import.meta.url)
const SUITE = require.resolve('@modelcontextprotocol/conformance/dist/index.js')
/** Gives the suite, built for Node 22, the `fs.globSync` it imports (a no-op on Node 22). */
const NODE20 = fileURLToPath(new URL('./conformance/node20.mjs', import.meta.url))

export interface ConformanceCheck {
  id: string
  name: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
  description: string
  errorMessage?: string
}

export interface ConformanceRun {
  /** Every check of every scenario, by the scenario's name. */
  scenarios: Map<string, ConformanceCheck[]>
  exitCode: number | null
  output: string
}

export interface ConformanceOptions {
  /** The issuer URL, as its metadata names it. */
  issuerUrl: string
  clientId: string
  /** `--resource`: sent at /authorize and /token. */
  resource?: string
  /**
   * The browser's part for the authorization URL the suite prints: it must end with a request to
   * the redirect URI the issuer answers with (see {@link signIn}).
   */
  browse: (authorizationUrl: URL) => Promise<void>
}

/** A port free right now, for the suite's callback server. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * The login a browser would do for an authorization URL: the login page, the form posted with
 * its cookie; answers the issuer's answer to the form.
 */
export async function submitLoginPage(
  url: URL,
  username: string,
  password: string,
): Promise<HttpResponse> {
  const base = `${url.protocol}//${url.host}`
  const page = readLoginPage(await send(base, { path: url.pathname + url.search, host: url.host }))
  return submitLogin(
    base,
    url.host,
    { csrf_token: page.csrfToken, username, password },
    page.cookie,
  )
}

/** Follows the issuer's 303 to the redirect URI: the suite's callback server. */
export async function followRedirect(answer: HttpResponse): Promise<void> {
  const location = answer.headers.location
  if (answer.status !== 303 || location === undefined) {
    throw new Error(`the issuer answered ${answer.status}: ${answer.text.slice(0, 200)}`)
  }
  await fetch(location)
}

/** The browser's part for a client the tenant lists: sign in, then back to the client. */
export function signIn(username: string, password: string): ConformanceOptions['browse'] {
  return async (url) => followRedirect(await submitLoginPage(url, username, password))
}

/** Cookies a response sets, as a Cookie header value, merged over `cookie`. */
function withCookies(cookie: string, answer: HttpResponse): string {
  const jar = new Map(
    cookie
      .split('; ')
      .filter(Boolean)
      .map((c) => [c.split('=')[0]!, c]),
  )
  for (const set of answer.headers['set-cookie'] ?? []) {
    const pair = set.split(';', 1)[0]!
    jar.set(pair.split('=')[0]!, pair)
  }
  return [...jar.values()].join('; ')
}

function decode(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
}

/**
 * The consent page's form as a browser submits it with its Allow button: the form's hidden
 * fields plus the button's name and value, posted to its action. Read from the HTML alone, as a
 * browser would, not from what the issuer's tests know of its fields.
 */
export function allowForm(html: string): { action: string; body: string } {
  for (const form of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const button = /<button\b([^>]*)>\s*Allow\s*<\/button>/i.exec(form[2]!)
    if (button === null) continue
    const fields = new URLSearchParams()
    for (const input of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
      const name = /name="([^"]*)"/.exec(input[0])?.[1]
      const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? ''
      if (name !== undefined && /type="hidden"/i.test(input[0])) fields.append(name, decode(value))
    }
    const name = /name="([^"]*)"/.exec(button[1]!)?.[1]
    if (name !== undefined) {
      fields.append(name, decode(/value="([^"]*)"/.exec(button[1]!)?.[1] ?? ''))
    }
    const action = decode(/action="([^"]*)"/.exec(form[1]!)?.[1] ?? '/authorize')
    return { action, body: fields.toString() }
  }
  throw new Error(`no consent form with an Allow button:\n${html.slice(0, 500)}`)
}

/**
 * The browser's part for a client the user must allow: sign in, press Allow on the consent page,
 * then back to the client.
 */
export function signInAndAllow(username: string, password: string): ConformanceOptions['browse'] {
  return async (url) => {
    const base = `${url.protocol}//${url.host}`
    const page = readLoginPage(
      await send(base, { path: url.pathname + url.search, host: url.host }),
    )
    const fields = { csrf_token: page.csrfToken, username, password }
    const answer = await submitLogin(base, url.host, fields, page.cookie)
    if (answer.status !== 200) {
      throw new Error(`no consent page (${answer.status}): ${answer.text.slice(0, 200)}`)
    }
    const form = allowForm(answer.text)
    const allowed = await send(base, {
      method: 'POST',
      path: form.action,
      host: url.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: withCookies(page.cookie, answer),
      },
      body: form.body,
    })
    await followRedirect(allowed)
  }
}

/** Runs both authorization-server scenarios of the suite against `issuerUrl`. */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceRun> {
  const outputDir = mkdtempSync(join(tmpdir(), 'tessera-mcp-conformance-'))
  try {
    const port = await freePort()
    const args = ['--import', NODE20, SUITE, 'authorization', '--url', options.issuerUrl]
    args.push('--client-id', options.clientId, '--port', String(port), '--output-dir', outputDir)
    if (options.resource !== undefined) args.push('--resource', options.resource)
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // The suite waits 5 minutes for a callback that a failed login never sends.
      timeout: 60_000,
    })
    let output = ''
    let login: Promise<void> | undefined
    let loginError: Error | undefined
    const authorizePrefix = `${options.issuerUrl}/authorize?`
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const line = output.split('\n').find((text) => text.startsWith(authorizePrefix))
      if (line === undefined || login !== undefined) return
      login = options.browse(new URL(line.trim())).catch((error: unknown) => {
        loginError = error instanceof Error ? error : new Error(String(error))
        child.kill()
      })
    })
    const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    await login
    if (loginError !== undefined) throw loginError
    return { scenarios: readChecks(outputDir), exitCode, output }
  } finally {
    rmSync(outputDir, { recursive: true, force: true })
  }
}

/** The checks.json of each scenario the suite saved under `outputDir`. */
function readChecks(outputDir: string): Map<string, ConformanceCheck[]> {
  const scenarios = new Map<string, ConformanceCheck[]>()
  for (const entry of readdirSync(outputDir).sort()) {
    // authorization-server-<scenario>-<ISO timestamp with dashes>
    const scenario = /^authorization-server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(entry)?.[1]
    if (scenario === undefined) continue
    const text = readFileSync(join(outputDir, entry, 'checks.json'), 'utf8')
    scenarios.set(scenario, JSON.parse(text) as ConformanceCheck[])
  }
  return scenarios
}
