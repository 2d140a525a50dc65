import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { csrfOf, isConsentPage } from './consent.js'
import { send } from './http.js'
import type { HttpResponse } from './http.js'
import { submitLogin } from './oauth.js'
import { CookieJar, redirectOf, visit } from './oidc.js'

// The official MCP TypeScript SDK client against an MCP server guarded by the verifier (the
// example app, examples/mcp-server/server.mjs, in a child process) and a Tessera issuer: the
// SDK finds the issuer, registers (or names its metadata document), sends the user to
// /authorize, and redeems the code. The browser's part is played here over HTTP.

const EXAMPLE = fileURLToPath(new URL('../../../../examples/mcp-server/', import.meta.url))
/** The scope the example server asks for. */
export const MCP_SCOPE = 'orders:read'
/** Where the SDK client says it sends the browser back (loopback: any port matches). */
export const MCP_REDIRECT = 'http://127.0.0.1/callback'
/** The user of the fixture providers (test/fixtures/basic/providers/users.mjs). */
const ALICE = { username: 'alice', password: 'alice-password' }

/** A port free right now: the kernel picks it, we release it and hand it to the server. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface McpServer {
  /** `http://localhost:<port>/mcp`: the URL clients call, the resource they ask tokens for. */
  url: string
  output(): string
  close(): Promise<void>
}

/**
 * The example MCP server on `port`, trusting tokens of `issuer` for its URL: HS256 ones with
 * `jwtSecret`, else RS256 ones checked with the issuer's JWKS.
 */
export async function startMcpServer(options: {
  port: number
  issuer: string
  jwtSecret?: string
  /** More environment, e.g. NODE_EXTRA_CA_CERTS to fetch the JWKS of an https issuer. */
  vars?: Record<string, string>
}): Promise<McpServer> {
  const url = `http://localhost:${options.port}/mcp`
  const child: ChildProcess = spawn(process.execPath, ['server.mjs'], {
    cwd: EXAMPLE,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(options.port),
      ISSUER: options.issuer,
      MCP_URL: url,
      ...(options.jwtSecret === undefined ? {} : { JWT_SECRET: options.jwtSecret }),
      ...options.vars,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.includes('listening on')) resolve()
    })
    void exited.then(() => reject(new Error(`server.mjs exited: ${output}`)))
  })
  return {
    url,
    output: () => output,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** Every request of the SDK, as `METHOD url`, and where those to the issuer go. */
export interface SdkFetch {
  fetch: typeof fetch
  calls: string[]
  /** The issuer process (replica) that gets the requests to the issuer from now on. */
  route(issuerProcessUrl: string): void
}

/**
 * A fetch that sends every request to `baseUrl` (an issuer process on loopback, or the TLS proxy
 * in front of it) with the URL's host as Host, so that an issuer URL no DNS knows reaches it.
 */
function fetchAt(baseUrl: string) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    const target = new URL(url)
    const headers: Record<string, string> = {}
    new Headers(init.headers).forEach((value, name) => (headers[name] = value))
    const body = init.body
    if (body !== undefined && body !== null && typeof body !== 'string') {
      if (!(body instanceof URLSearchParams)) throw new TypeError('unsupported body type')
    }
    const answer = await send(baseUrl, {
      method: init.method ?? 'GET',
      path: target.pathname + target.search,
      host: target.host,
      headers,
      ...(body === undefined || body === null ? {} : { body: body.toString() }),
    })
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of Array.isArray(value) ? value : [value ?? '']) {
        responseHeaders.append(name, one)
      }
    }
    const empty = answer.status === 204 || answer.status === 304
    return new Response(empty ? null : answer.text, {
      status: answer.status,
      headers: responseHeaders,
    })
  }
}

/**
 * The SDK's fetch: requests to the issuer URL (its metadata, /register, /authorize, /token) go to
 * the issuer at `issuerBase` (see {@link fetchAt}): `https://auth.mcp.test` under `start`
 * reaches the process on loopback as if through a proxy that terminates TLS. Every other
 * request (the MCP server's) goes out as it is.
 */
export function sdkFetch(issuerUrl: string, issuerBase: string): SdkFetch {
  const issuerOrigin = new URL(issuerUrl).origin
  const calls: string[] = []
  let toIssuer = fetchAt(issuerBase)
  const routed = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = input instanceof Request ? input.url : input.toString()
    calls.push(`${init.method ?? 'GET'} ${url}`)
    if (new URL(url).origin !== issuerOrigin) return fetch(input, init)
    return toIssuer(url, init)
  }
  return {
    fetch: routed,
    calls,
    route(url) {
      toIssuer = fetchAt(url)
    },
  }
}

/** What the user saw and did in the browser for one authorization URL. */
export interface Visit {
  authorizationUrl: URL
  /** The issuer's answer to the login form: the consent page, or a 303 when remembered. */
  consentPage: HttpResponse
}

/**
 * The OAuth client provider of a test: keeps what the SDK saves in memory, and plays the
 * browser when the SDK sends the user to the issuer: alice signs in and allows on the consent
 * page; the code the issuer sends back waits in `code` for `transport.finishAuth`.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  clientMetadataUrl?: string
  code?: string
  visits: Visit[] = []
  #client?: OAuthClientInformationMixed
  #tokens?: OAuthTokens
  #verifier?: string
  readonly #issuerProcess: () => string

  constructor(issuerProcess: () => string, options: { clientMetadataUrl?: string } = {}) {
    this.#issuerProcess = issuerProcess
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl
  }

  get redirectUrl(): string {
    return MCP_REDIRECT
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Tessera MCP e2e client',
      client_uri: 'https://client.example/about',
      redirect_uris: [MCP_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }

  state(): string {
    return 'mcp-e2e-state'
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens
  }

  /** Spoils the access token kept, so that the MCP server refuses it and the SDK refreshes. */
  spoilAccessToken(): void {
    if (this.#tokens !== undefined) this.#tokens = { ...this.#tokens, access_token: 'spoiled' }
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error('no code verifier saved')
    return this.#verifier
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const base = this.#issuerProcess()
    const jar = new CookieJar()
    // The login form (its cookie, tessera_login or __Host-tessera_login over https, in `jar`).
    const fields = { csrf_token: csrfOf(await visit(base, authorizationUrl, jar)), ...ALICE }
    const consentPage = await submitLogin(base, authorizationUrl.host, fields, jar.header())
    jar.take(consentPage)
    this.visits.push({ authorizationUrl, consentPage })
    // A consent given before is remembered: the login goes straight back to the client.
    if (consentPage.status === 303) return this.#takeCode(redirectOf(consentPage))
    if (!isConsentPage(consentPage)) {
      throw new Error(`no consent page (${consentPage.status}): ${consentPage.text.slice(0, 300)}`)
    }
    const csrf = csrfOf(consentPage)
    const allowed = await send(base, {
      method: 'POST',
      path: '/authorize',
      host: authorizationUrl.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: jar.header() ?? '',
      },
      body: new URLSearchParams({ csrf_token: csrf, decision: 'allow' }).toString(),
    })
    this.#takeCode(redirectOf(allowed))
  }

  #takeCode(back: URL): void {
    if (back.searchParams.get('state') !== this.state()) throw new Error(`bad state: ${back.href}`)
    this.code = back.searchParams.get('code') ?? undefined
  }
}

/** A connected SDK client: list tools, call them, close. */
export interface Connection {
  client: Client
  transport: StreamableHTTPClientTransport
}

/** Connects an SDK client to `mcpUrl` with `provider` and `fetch`, once. */
export async function connectOnce(
  mcpUrl: string,
  provider: OAuthClientProvider,
  fetchFn: typeof fetch,
): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    authProvider: provider,
    fetch: fetchFn,
  })
  const client = new Client({ name: 'tessera-mcp-e2e', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/**
 * What an MCP application does on its first connection: connect; on UnauthorizedError (the
 * user was sent to the issuer) finish the authorization with the code the browser brought back,
 * and connect again.
 */
export async function connectWithLogin(
  mcpUrl: string,
  provider: TestOAuthProvider,
  fetchFn: typeof fetch,
): Promise<Connection> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    authProvider: provider,
    fetch: fetchFn,
  })
  const client = new Client({ name: 'tessera-mcp-e2e', version: '1.0.0' })
  const refused = await client.connect(first).then(
    () => undefined,
    (error: unknown) => error,
  )
  if (!(refused instanceof UnauthorizedError)) {
    throw new Error(`expected the SDK to send the user to the issuer, got ${String(refused)}`)
  }
  if (provider.code === undefined) throw new Error('the browser brought no code back')
  await first.finishAuth(provider.code)
  return connectOnce(mcpUrl, provider, fetchFn)
}

/** The whoami tool's answer: whom the token speaks for. */
export async function whoami(connection: Connection): Promise<Record<string, unknown>> {
  const result = await connection.client.callTool({ name: 'whoami', arguments: {} })
  const [content] = result.content as { type: string; text: string }[]
  return JSON.parse(content!.text) as Record<string, unknown>
}
