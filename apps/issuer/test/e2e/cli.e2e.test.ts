import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyPassword } from '../../src/index.js'
import { postForm, send } from '../support/http.js'
import { FIXTURES, JWT_SECRET, tempDir } from '../support/issuer.js'

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))
const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const EXAMPLES = join(REPO, 'examples')

function cleanEnv(vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' }
  return { ...env, ...vars }
}

function runCli(args: string[], vars: Record<string, string>, input?: string) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: cleanEnv(vars),
    input,
    encoding: 'utf8',
    timeout: 20_000,
  })
}

describe('tessera CLI', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('refuses to start with a 31-character JWT_SECRET, before listening', () => {
    const secret = 'x'.repeat(31)
    const result = runCli(['start', '--port', '0'], {
      JWT_SECRET: secret,
      TESSERA_CONFIG: join(FIXTURES, 'basic'),
      DATABASE_URL: `sqlite:${tmp.dir}/refuse.db`,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('environment: JWT_SECRET: must be at least 32 characters')
    expect(result.stderr).not.toContain(secret)
    expect(result.stdout).not.toContain('listening')
  })

  it('refuses to start with a host served by two tenants, naming both files', () => {
    const dir = join(tmp.dir, 'dup')
    mkdirSync(join(dir, 'providers'), { recursive: true })
    writeFileSync(
      join(dir, 'providers', 'p.mjs'),
      'export default { authenticate: async () => null }\n',
    )
    for (const name of ['one', 'two']) {
      writeFileSync(
        join(dir, `${name}.yaml`),
        `name: ${name}\nconfig:\n  hosts: [shared.test]\n  providers: [providers/p.mjs]\n  clients: []\n`,
      )
    }
    const result = runCli(['start', '--port', '0'], {
      JWT_SECRET,
      TESSERA_CONFIG: dir,
      DATABASE_URL: `sqlite:${tmp.dir}/dup.db`,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/two\.yaml:3: config\.hosts\.0: .*shared\.test.*one/)
    expect(result.stdout).not.toContain('listening')
  })

  it('check-config accepts the examples and lists their tenants', () => {
    const result = runCli(['check-config', '--config', EXAMPLES], {
      JWT_SECRET,
      KEY_ENCRYPTION_SECRET: 'cli-e2e-key-encryption-secret-0123456789',
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('acme: HS256')
    expect(result.stdout).toContain('globex: RS256')
  })

  it('hash-password reads stdin and prints a hash that verifies', async () => {
    const result = runCli(['hash-password'], {}, 'correct horse\n')
    expect(result.status).toBe(0)
    const hash = result.stdout.trim()
    expect(hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$/)
    expect(await verifyPassword('correct horse', hash)).toBe(true)
    expect(await verifyPassword('correct horse ', hash)).toBe(false)
  })

  it('dev serves the examples, issues a token, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'dev', '--port', '0'], {
      cwd: REPO,
      env: cleanEnv({ JWT_SECRET, DATABASE_URL: `sqlite:${tmp.dir}/dev.db`, ADMIN_PORT: '0' }),
    })
    let stdout = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString()
        const line = stdout.split('\n').find((l) => l.includes('tessera issuer listening'))
        if (line) resolve((JSON.parse(line) as { url: string }).url)
      })
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stdout}`)))
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    try {
      const res = await postForm(url, 'acme.localhost:3000', {
        grant_type: 'password',
        username: 'alice',
        password: 'wonderland-42',
        client_id: 'ae47b9ad-7918-43cc-8e8c-247296b26e5f',
        client_secret: 'acme-cli-demo-secret',
      })
      expect(res.status).toBe(200)
      const { payload } = await jwtVerify(
        (res.json as { access_token: string }).access_token,
        new TextEncoder().encode(JWT_SECRET),
        { issuer: 'http://acme.localhost:3000', audience: 'https://api.acme.test' },
      )
      expect(payload).toMatchObject({ name: 'Alice Liddell', scope: 'orders:read orders:write' })
      const jwks = await send(url, { path: '/.well-known/jwks.json', host: 'globex.localhost' })
      expect((jwks.json as { keys: unknown[] }).keys).toHaveLength(1)
      // Issue #12: the login page names the example app by its client_name, not its UUID.
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: 'bf2d7604-7f24-4538-b46f-140f16693256',
        redirect_uri: 'http://localhost:8081/callback',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })
      const login = await send(url, {
        path: `/authorize?${query.toString()}`,
        host: 'acme.localhost:3000',
      })
      expect(login.status).toBe(200)
      expect(login.text).toContain('Acme web app')
      expect(login.text).not.toContain('bf2d7604-7f24-4538-b46f-140f16693256')
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    expect(stdout).toContain('shutting down')
  })
})
