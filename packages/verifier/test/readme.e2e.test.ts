import { execFile } from 'node:child_process'
import {
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
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { startIssuerProcess } from '@tessera/test-support'
import type { IssuerProcess } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  API_PORT,
  EXAMPLES_DIR,
  JWT_SECRET,
  PACKAGE_DIR,
  README,
  START_PORT,
  exampleToken,
  freePort,
  packageOf,
  startServer,
  stopServer,
  withPorts,
} from './support/readme.js'
import type { Block } from './support/readme.js'

// The README's quick starts are run as written, against the example tenants
// that `pnpm start` serves, so that the docs cannot drift from the package or the examples.

const execFileAsync = promisify(execFile)
const { version: VERSION } = JSON.parse(
  readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'),
) as { version: string }

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

/** Orders the imported packages as the install line lists them, so that only the sets differ. */
function byInstallOrder(installed: string[]): (a: string, b: string) => number {
  const rank = (pkg: string): number => {
    const index = installed.indexOf(pkg)
    return index === -1 ? installed.length : index
  }
  return (a, b) => rank(a) - rank(b)
}
