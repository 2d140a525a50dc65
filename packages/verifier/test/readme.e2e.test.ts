import { execFile, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startIssuerProcess } from '@tessera/test-support'
import type { IssuerProcess } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultFetch } from '../src/internal/default-fetch.js'

// The README's quick starts are run as written, against the example tenants
// that `pnpm start` serves, so that the docs cannot drift from the package or the examples.

const execFileAsync = promisify(execFile)
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLES_DIR = fileURLToPath(new URL('../../../examples/', import.meta.url))
const README = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8')
const { version: VERSION } = JSON.parse(
  readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'),
) as { version: string }
const JWT_SECRET = 'readme-e2e-secret-0123456789-abcdefghij'
// `pnpm start` listens on 3000 and the README's servers on 4000; here both run on free ports.
const START_PORT = '3000'
const API_PORT = '4000'

interface Block {
  lang: string
  code: string
}

/** The fenced code blocks of each `### ` section under `## Quick start`, by heading. */
function quickStartSections(markdown: string): Map<string, Block[]> {
  const start = markdown.indexOf('\n## Quick start\n')
  expect(start).toBeGreaterThan(-1)
  const rest = markdown.slice(start + 1)
  const end = rest.indexOf('\n## ', 1)
  const part = end === -1 ? rest : rest.slice(0, end)
  const sections = new Map<string, Block[]>()
  for (const chunk of part.split(/\n### /).slice(1)) {
    const heading = chunk.slice(0, chunk.indexOf('\n')).trim()
    const blocks = [...chunk.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((match) => ({
      lang: match[1]!,
      code: match[2]!,
    }))
    sections.set(heading, blocks)
  }
  return sections
}

/** The package a bare import specifier names (`@koa/router`, `hono` for `hono/cors`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/**
 * The hosts of the example tenants, as `pnpm start` serves them: `acme.localhost:3000` (a host
 * written without a port takes the one `dev` listens on).
 */
function exampleHosts(): Map<string, string> {
  const hosts = new Map<string, string>()
  for (const tenant of readdirSync(EXAMPLES_DIR, { withFileTypes: true })) {
    // providers/ and the example apps (mcp-server/) hold no tenant.
    const file = join(EXAMPLES_DIR, tenant.name, 'tenant.yaml')
    if (!tenant.isDirectory() || !existsSync(file)) continue
    const yaml = readFileSync(file, 'utf8')
    const host = /hosts:\s*\[\s*([^\],\s]+)/.exec(yaml)?.[1]
    expect(host, `hosts of examples/${tenant.name}`).toBeDefined()
    const name = host!.split(':')[0]!
    hosts.set(tenant.name, `${name}:${host!.split(':')[1] ?? START_PORT}`)
  }
  return hosts
}

/** A port free right now: the kernel picks it, we release it and hand it to a child process. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The README's text with the documented ports replaced by the ones this test listens on. */
function withPorts(text: string, issuerPort: number, apiPort?: number): string {
  const issuerReplaced = text.replaceAll(`.localhost:${START_PORT}`, `.localhost:${issuerPort}`)
  return apiPort === undefined
    ? issuerReplaced
    : issuerReplaced.replaceAll(`localhost:${API_PORT}`, `localhost:${apiPort}`)
}

const sections = quickStartSections(README)
const QUICK_STARTS = ['Koa', 'Express', 'fetch-style handlers (Hono, Next.js route handlers, …)']

let issuer: IssuerProcess
let issuerPort: number
let workDir: string

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'tessera-verifier-readme-'))
  // The examples as `pnpm start` serves them, on any free port: their hosts name none, so `dev`
  // gives each issuer URL the port it listens on (`http://acme.localhost:<port>`).
  issuer = await startIssuerProcess({ config: EXAMPLES_DIR, jwtSecret: JWT_SECRET, port: 0 })
  issuerPort = Number(new URL(issuer.url).port)
})

afterAll(async () => {
  await issuer?.stop()
  rmSync(workDir, { recursive: true, force: true })
})

/** A token of the example tenant at `host` by the password grant, as the README's curl asks. */
async function exampleToken(
  host: string,
  client: string,
  user: string,
  scope?: string,
  extra: Record<string, string> = {},
): Promise<string> {
  // By name, as the README's curl does: the verifier's own fetch resolves *.localhost.
  const response = await defaultFetch(`http://${host}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(client).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'password',
      username: user.split(':')[0]!,
      password: user.split(':')[1]!,
      ...(scope === undefined ? {} : { scope }),
      ...extra,
    }).toString(),
  })
  const body = (await response.json()) as { access_token?: string }
  expect(response.status).toBe(200)
  return body.access_token!
}

/** Runs `node server.js` and resolves once it has printed its first line. */
async function startServer(
  dir: string,
  port: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['server.js'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), JWT_SECRET, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.includes('listening on')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server.js exited with ${code}: ${output}`)))
  })
  // It printed before listen finished on some frameworks: wait until it answers.
  for (let i = 0; i < 50; i += 1) {
    const ok = await fetch(`http://127.0.0.1:${port}/me`).then(
      () => true,
      () => false,
    )
    if (ok) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { child, output: () => output }
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * The README's "Try it" block against the running servers: each command's output must match
 * the comment lines after it, `…` standing for anything.
 */
async function runTryIt(apiPort: number): Promise<void> {
  const block = sections.get('Try it')?.find((b) => b.lang === 'sh')
  expect(block, 'the "Try it" shell block').toBeDefined()
  const script = withPorts(block!.code, issuerPort, apiPort)
  const expected = script
    .split('\n')
    .filter((line) => line.startsWith('# '))
    .map((line) => line.slice(2))
  const { stdout } = await execFileAsync('bash', ['-euo', 'pipefail', '-c', script], {
    env: { ...process.env, JWT_SECRET },
    timeout: 30_000,
  })
  const lines = stdout
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
  expect(lines).toHaveLength(expected.length)
  expected.forEach((pattern, index) => {
    const escaped = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('…', '.*')
    expect(lines[index]).toMatch(new RegExp(`^${escaped}$`, 'i'))
  })
}

describe('the README', () => {
  it('has a setup block and a program for each quick start, for the example tenants', () => {
    expect([...sections.keys()]).toEqual(expect.arrayContaining([...QUICK_STARTS, 'Try it']))
    const hosts = exampleHosts()
    expect([...hosts.keys()].sort()).toEqual(['acme', 'globex'])
    for (const name of QUICK_STARTS) {
      const blocks = sections.get(name)!
      expect(blocks.map((b) => b.lang)).toEqual(['sh', 'js'])
      // The issuers `pnpm start` serves, literally, not a placeholder.
      for (const host of hosts.values()) expect(blocks[1]!.code).toContain(`'http://${host}'`)
      expect(blocks[1]!.code).toContain('process.env.PORT ?? ' + API_PORT)
    }
  })

  for (const name of QUICK_STARTS) {
    it(`quick start "${name}" works when pasted into an empty directory`, async () => {
      const [setup, program] = sections.get(name)!
      const dir = join(workDir, name.split(' ')[0]!.toLowerCase())
      mkdirSync(dir)

      // The setup block, run as written except `npm install`, which is checked instead: it
      // must name every package the program imports; they are linked from this workspace.
      const install = setup!.code.split('\n').filter((line) => line.startsWith('npm install '))
      expect(install).toHaveLength(1)
      // The package is installed from the tarball its Install section packs.
      const tarball = `/tmp/tessera-verifier-${VERSION}.tgz`
      const installed = install[0]!
        .split(/\s+/)
        .slice(2)
        .map((arg) => (arg === tarball ? '@tessera/verifier' : arg))
      const rest = setup!.code
        .split('\n')
        .filter((line) => !line.startsWith('npm install '))
        .join('\n')
      await execFileAsync('bash', ['-euo', 'pipefail', '-c', rest], { cwd: dir })
      expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({
        type: 'module',
      })
      const imported = [...program!.code.matchAll(/^import .* from '([^'.][^']*)'$/gm)].map(
        (match) => packageOf(match[1]!),
      )
      expect(imported.length).toBeGreaterThan(1)
      expect(installed).toEqual([...new Set(imported)].sort(byInstallOrder(installed)))
      for (const pkg of installed) {
        const target =
          pkg === '@tessera/verifier'
            ? PACKAGE_DIR
            : realpathSync(join(PACKAGE_DIR, 'node_modules', pkg))
        mkdirSync(dirname(join(dir, 'node_modules', pkg)), { recursive: true })
        symlinkSync(target, join(dir, 'node_modules', pkg), 'dir')
      }

      writeFileSync(join(dir, 'server.js'), withPorts(program!.code, issuerPort))
      let apiPort = 0
      let server: Awaited<ReturnType<typeof startServer>> | undefined
      for (let attempt = 0; server === undefined; attempt += 1) {
        apiPort = await freePort()
        // Another process may take the port between freePort and listen: try another one.
        server = await startServer(dir, apiPort).catch((error: unknown) => {
          if (attempt === 2) throw error
          return undefined
        })
      }
      try {
        const acme = `acme.localhost:${issuerPort}`
        const globex = `globex.localhost:${issuerPort}`
        const acmeToken = await exampleToken(
          acme,
          'ae47b9ad-7918-43cc-8e8c-247296b26e5f:acme-cli-demo-secret',
          'alice:wonderland-42',
          'orders:read',
        )
        const globexToken = await exampleToken(
          globex,
          '80f990aa-b524-4172-9bac-f16ea0ea6659:globex-cli-demo-secret',
          'bob:builder-42',
        )
        const call = (path: string, token?: string): Promise<Response> =>
          fetch(`http://127.0.0.1:${apiPort}${path}`, {
            headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
          })

        // acme: HS256 with the shared secret.
        const orders = await call('/orders', acmeToken)
        expect(orders.status).toBe(200)
        expect(await orders.json()).toMatchObject({ orders: [] })
        const acmeMe = await call('/me', acmeToken)
        expect(await acmeMe.json()).toMatchObject({
          iss: `http://${acme}`,
          scopes: ['orders:read'],
        })

        // globex: RS256, its JWKS fetched by the server from globex.localhost by name.
        const globexMe = await call('/me', globexToken)
        expect(globexMe.status).toBe(200)
        expect(await globexMe.json()).toMatchObject({
          iss: `http://${globex}`,
          scopes: ['reports:read'],
        })
        const refused = await call('/orders', globexToken)
        expect(refused.status).toBe(403)
        expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"')

        const anonymous = await call('/me')
        expect(anonymous.status).toBe(401)
        expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="api"')
        expect((await call('/me', `${acmeToken}x`)).status).toBe(401)

        await runTryIt(apiPort)
      } finally {
        await stopServer(server.child)
      }
      expect(server.output()).not.toContain('Error')
    })
  }
})

/** The blocks of a `## ` section of the README, by language. */
function sectionBlocks(markdown: string, heading: string): Block[] {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  expect(start, `section ${heading}`).toBeGreaterThan(-1)
  const rest = markdown.slice(start + 1)
  const end = rest.indexOf('\n## ', 1)
  const part = end === -1 ? rest : rest.slice(0, end)
  return [...part.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1]!,
    code: match[2]!,
  }))
}

describe('the README section "Protect an MCP server"', () => {
  // The example tenants with acme's MCP resource on the port this server gets instead of 4000:
  // tokens are asked for the server's URL, so the tenant must list it.
  let mcpIssuer: IssuerProcess
  let mcpIssuerPort: number
  let apiPort: number
  let server: Awaited<ReturnType<typeof startServer>>

  beforeAll(async () => {
    const program = sectionBlocks(README, 'Protect an MCP server').find((b) => b.lang === 'js')
    expect(program, 'its js block').toBeDefined()
    apiPort = await freePort()
    const tenants = join(workDir, 'mcp-tenants')
    for (const folder of ['acme', 'globex', 'providers']) {
      cpSync(join(EXAMPLES_DIR, folder), join(tenants, folder), { recursive: true })
    }
    const acmeYaml = join(tenants, 'acme', 'tenant.yaml')
    const yaml = readFileSync(acmeYaml, 'utf8')
    expect(yaml, 'acme lists the README server').toContain(
      `- uri: http://localhost:${API_PORT}/mcp`,
    )
    writeFileSync(acmeYaml, yaml.replace(`localhost:${API_PORT}/mcp`, `localhost:${apiPort}/mcp`))
    mcpIssuer = await startIssuerProcess({ config: tenants, jwtSecret: JWT_SECRET, port: 0 })
    mcpIssuerPort = Number(new URL(mcpIssuer.url).port)

    // The program pasted into an empty directory with the packages it imports.
    const dir = join(workDir, 'mcp')
    mkdirSync(join(dir, 'node_modules', '@tessera'), { recursive: true })
    mkdirSync(join(dir, 'node_modules', '@modelcontextprotocol'), { recursive: true })
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    symlinkSync(PACKAGE_DIR, join(dir, 'node_modules', '@tessera', 'verifier'), 'dir')
    for (const pkg of ['express', '@modelcontextprotocol/sdk']) {
      symlinkSync(
        realpathSync(join(PACKAGE_DIR, 'node_modules', pkg)),
        join(dir, 'node_modules', pkg),
        'dir',
      )
    }
    const imported = [...program!.code.matchAll(/^import .* from '([^'.][^']*)'$/gm)].map((match) =>
      packageOf(match[1]!),
    )
    expect([...new Set(imported)].sort()).toEqual([
      '@modelcontextprotocol/sdk',
      '@tessera/verifier',
      'express',
    ])
    writeFileSync(join(dir, 'server.js'), withPorts(program!.code, mcpIssuerPort, apiPort))
    server = await startServer(dir, apiPort)
  })

  afterAll(async () => {
    if (server !== undefined) await stopServer(server.child)
    await mcpIssuer?.stop()
  })

  it('serves the metadata, names it in the 401, and leads to the issuer', async () => {
    const api = `http://localhost:${apiPort}`
    const anonymous = await fetch(`http://127.0.0.1:${apiPort}/mcp`, { method: 'POST' })
    expect(anonymous.status).toBe(401)
    const metadataUrl = `${api}/.well-known/oauth-protected-resource/mcp`
    expect(anonymous.headers.get('www-authenticate')).toBe(
      `Bearer realm="api", resource_metadata="${metadataUrl}"`,
    )
    const metadata = await defaultFetch(metadataUrl, {})
    expect(metadata.status).toBe(200)
    const document = (await metadata.json()) as { authorization_servers: string[] }
    expect(document).toEqual({
      resource: `${api}/mcp`,
      authorization_servers: [`http://acme.localhost:${mcpIssuerPort}`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['orders:read'],
      resource_name: 'Acme orders (MCP)',
    })
    // The document as the README shows it, ports aside.
    expect(withPorts(README, mcpIssuerPort, apiPort)).toContain(JSON.stringify(document))
    // The client's next step: the authorization server's own metadata (RFC 8414).
    const issuerUrl = document.authorization_servers[0]!
    const discovery = await defaultFetch(`${issuerUrl}/.well-known/oauth-authorization-server`, {})
    expect(discovery.status).toBe(200)
    expect(await discovery.json()).toMatchObject({ issuer: issuerUrl })
  })

  it('runs the tool for the MCP SDK client with a token asked for the server', async () => {
    const mcpUrl = new URL(`http://localhost:${apiPort}/mcp`)
    const acme = `acme.localhost:${mcpIssuerPort}`
    const backOffice = 'ae47b9ad-7918-43cc-8e8c-247296b26e5f:acme-cli-demo-secret'
    const token = await exampleToken(acme, backOffice, 'alice:wonderland-42', 'orders:read', {
      resource: mcpUrl.href,
    })
    const connect = async (headers: Record<string, string>): Promise<Client> => {
      const client = new Client({ name: 'readme-test', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }))
      return client
    }
    const client = await connect({ authorization: `Bearer ${token}` })
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(['whoami'])
      const result = await client.callTool({ name: 'whoami', arguments: {} })
      const [content] = result.content as { type: string; text: string }[]
      expect(JSON.parse(content!.text)).toEqual({
        sub: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
        client_id: backOffice.split(':')[0],
        scopes: ['orders:read'],
      })
    } finally {
      await client.close()
    }

    // Without a token, or with one of the tenant for its other API, the client gets the 401.
    await expect(connect({})).rejects.toMatchObject({ code: 401 })
    const other = await exampleToken(acme, backOffice, 'alice:wonderland-42', 'orders:read')
    await expect(connect({ authorization: `Bearer ${other}` })).rejects.toMatchObject({
      code: 401,
    })
    expect(server.output()).not.toContain('Error')
  })
})

/** Orders the imported packages as the install line lists them, so that only the sets differ. */
function byInstallOrder(installed: string[]): (a: string, b: string) => number {
  const rank = (pkg: string): number => {
    const index = installed.indexOf(pkg)
    return index === -1 ? installed.length : index
  }
  return (a, b) => rank(a) - rank(b)
}
