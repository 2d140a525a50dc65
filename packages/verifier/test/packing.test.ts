import { execFileSync } from 'node:child_process'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publint } from 'publint'
import { afterAll, describe, expect, it } from 'vitest'

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))

// Runs in a project outside the workspace, against the installed tarball only.
const CHECK = `
import { createHmac } from 'node:crypto'
import { createVerifier, renderError, VerifierError } from '@tessera/verifier'
import { bearer as koaBearer, requireScope as koaRequireScope } from '@tessera/verifier/koa'
import { bearer as expressBearer, requireScope as expressRequireScope } from '@tessera/verifier/express'
import { verifyRequest } from '@tessera/verifier/fetch'
import manifest from '@tessera/verifier/package.json' with { type: 'json' }

const secret = 'packed-secret-0123456789-abcdefghijkl'
const segment = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
const input = segment({ alg: 'HS256', typ: 'JWT' }) + '.' +
  segment({ iss: 'https://issuer.test', sub: 'u', exp: Math.floor(Date.now() / 1000) + 60, scope: 'read' })
const token = input + '.' + createHmac('sha256', secret).update(input).digest('base64url')

const verifier = createVerifier({ issuer: 'https://issuer.test', secret })
const { payload } = await verifier.verify(token)
const ok = await verifyRequest(new Request('http://x/', { headers: { authorization: 'Bearer ' + token } }), verifier, { scope: 'read' })
const refused = await verifyRequest(new Request('http://x/'), verifier)
let code
try { await verifier.verify(token + 'x') } catch (error) { code = error instanceof VerifierError ? error.code : 'other' }
console.log(JSON.stringify({
  name: manifest.name,
  sub: payload.sub,
  fetchOk: ok.ok,
  fetchStatus: refused.ok ? 0 : refused.response.status,
  code,
  rendered: renderError(new VerifierError('ERR_TOKEN_EXPIRED', 'expired')).status,
  adapters: [koaBearer(verifier), koaRequireScope('read'), expressBearer(verifier), expressRequireScope('read')].map((f) => typeof f),
}))
`

/** The commands the README's Install section gives, by their first words. */
function installCommands(): { pack: string; install: string } {
  const readme = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('\n## Install\n'), readme.indexOf('\n## Quick start'))
  const lines = section.split('\n')
  const pack = lines.find((line) => line.startsWith('pnpm --filter @tessera/verifier pack '))
  const install = lines.find((line) => line.startsWith('npm install /'))
  expect(pack, 'the pack command of the README').toBeDefined()
  expect(install, "the README's npm install of the tarball").toBeDefined()
  return { pack: pack!, install: install! }
}

/**
 * A tarball of an installed dependency, as npm would fetch it: a project outside the workspace
 * then installs without the registry. Hard links are stored as files (pnpm's store links them,
 * and npm skips hard-link entries).
 */
function packDependency(name: string, into: string): string {
  const file = join(into, `${name.replace('/', '-')}.tgz`)
  const source = realpathSync(join(PACKAGE_DIR, 'node_modules', name))
  execFileSync('tar', [
    '-czf',
    file,
    '--hard-dereference',
    '-C',
    source,
    '--transform',
    's,^\\.,package,',
    '.',
  ])
  return file
}

describe('the tarball the README has one pack', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-verifier-pack-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("is made by the README's command and installs with npm, offline, outside the workspace", () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      version: string
      dependencies: Record<string, string>
    }
    const tarball = `tessera-verifier-${manifest.version}.tgz`
    const { pack, install } = installCommands()
    // Run as written from the repository root, into this test's directory instead of /tmp.
    expect(pack).toBe('pnpm --filter @tessera/verifier pack --pack-destination /tmp')
    expect(install).toBe(`npm install /tmp/${tarball}`)
    execFileSync('pnpm', ['--filter', '@tessera/verifier', 'pack', '--pack-destination', dir], {
      cwd: join(PACKAGE_DIR, '..', '..'),
      stdio: 'pipe',
    })
    expect(readdirSync(dir).filter((name) => name.endsWith('.tgz'))).toEqual([tarball])
    const files = execFileSync('tar', ['tzf', join(dir, tarball)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .sort()
    expect(files).toContain('package/dist/index.d.ts')
    expect(files).toContain('package/dist/koa.js')
    expect(files).toContain('package/LICENSE')
    expect(
      files.filter(
        (f) =>
          f.endsWith('.map') ||
          f.endsWith('.tsbuildinfo') ||
          f.includes('/src/') ||
          f.includes('test'),
      ),
    ).toEqual([])

    // Its runtime dependencies come from this workspace's copies, so that no registry is asked.
    const deps = join(dir, 'deps')
    mkdirSync(deps)
    const overrides = Object.fromEntries(
      Object.keys(manifest.dependencies).map((name) => [
        name,
        `file:${packDependency(name, deps)}`,
      ]),
    )
    const project = join(dir, 'project')
    mkdirSync(project)
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', overrides }),
    )
    writeFileSync(join(project, 'check.mjs'), CHECK)
    // koa and express are optional peers: the adapters import them only as types.
    execFileSync(
      'npm',
      ['install', join(dir, tarball), '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
      { cwd: project, stdio: 'pipe', timeout: 120_000 },
    )
    const output = execFileSync(process.execPath, ['check.mjs'], { cwd: project, encoding: 'utf8' })
    expect(JSON.parse(output)).toEqual({
      name: '@tessera/verifier',
      sub: 'u',
      fetchOk: true,
      fetchStatus: 401,
      code: 'ERR_TOKEN_INVALID',
      rendered: 401,
      adapters: ['function', 'function', 'function', 'function'],
    })
  }, 120_000)

  it('is published with provenance, publicly, when `pnpm release` runs with a token', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      publishConfig?: unknown
      private?: unknown
    }
    expect(manifest.private).toBeUndefined()
    expect(manifest.publishConfig).toEqual({ access: 'public', provenance: true })
  })

  it('passes publint', async () => {
    const { messages } = await publint({ pkgDir: PACKAGE_DIR, level: 'suggestion' })
    expect(messages).toEqual([])
  })
})
