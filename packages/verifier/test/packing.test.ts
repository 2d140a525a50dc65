import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
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

describe('the published tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-verifier-pack-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('installs with npm outside the workspace and works from every entry point', () => {
    execFileSync('pnpm', ['pack', '--pack-destination', dir], { cwd: PACKAGE_DIR, stdio: 'pipe' })
    const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))
    expect(tarball).toBe('tessera-verifier-0.1.0.tgz')
    const files = execFileSync('tar', ['tzf', join(dir, tarball!)], { encoding: 'utf8' })
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

    const project = join(dir, 'project')
    execFileSync('mkdir', ['-p', project])
    writeFileSync(
      join(project, 'package.json'),
      '{"name":"consumer","private":true,"type":"module"}',
    )
    writeFileSync(join(project, 'check.mjs'), CHECK)
    // koa and express are optional peers: the adapters import them only as types.
    execFileSync(
      'npm',
      [
        'install',
        join(dir, tarball!),
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--prefer-offline',
      ],
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

  it('passes publint', async () => {
    const { messages } = await publint({ pkgDir: PACKAGE_DIR, level: 'suggestion' })
    expect(messages).toEqual([])
  })
})
