import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyPassword } from '../../src/index.js'
import { postForm, send } from '../support/http.js'
import { signIn } from '../support/oauth.js'
import { eventually } from '../support/eventually.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

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

  it('dev serves the examples on the port it listens on: iss, metadata, login redirect; SIGTERM', async () => {
    // PORT=0: the real port is known only once listening, and the examples' hosts name none.
    const dev = await startIssuer({
      command: 'dev',
      args: ['--port', '0'],
      cwd: REPO,
      env: {
        JWT_SECRET,
        DATABASE_URL: `sqlite:${tmp.dir}/dev.db`,
        ADMIN_PORT: '0',
      },
    })
    const { url } = dev
    const port = new URL(url).port
    expect(port).not.toBe('3000')
    const acme = `http://acme.localhost:${port}`
    try {
      expect(listeningTenants(dev)).toContainEqual(
        expect.objectContaining({ name: 'acme', issuer: acme }),
      )
      const res = await postForm(url, 'acme.localhost', {
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
        { issuer: acme, audience: 'https://api.acme.test' },
      )
      expect(payload).toMatchObject({ name: 'Alice Liddell', scope: 'orders:read orders:write' })
      // RFC 8414 metadata: the issuer and every endpoint carry the listening port, whichever
      // spelling of the host (with or without a port) the request used.
      for (const host of ['acme.localhost', `acme.localhost:${port}`, 'acme.localhost:3000']) {
        const metadata = await send(url, {
          path: '/.well-known/oauth-authorization-server',
          host,
        })
        expect(metadata.status).toBe(200)
        const body = metadata.json as Record<string, unknown>
        expect(body.issuer).toBe(acme)
        expect(body.token_endpoint).toBe(`${acme}/token`)
        expect(body.authorization_endpoint).toBe(`${acme}/authorize`)
        expect(body.jwks_uri).toBe(`${acme}/.well-known/jwks.json`)
      }
      const globex = await send(url, {
        path: '/.well-known/oauth-authorization-server',
        host: 'globex.localhost',
      })
      expect((globex.json as { issuer: string }).issuer).toBe(`http://globex.localhost:${port}`)
      const jwks = await send(url, { path: '/.well-known/jwks.json', host: 'globex.localhost' })
      expect((jwks.json as { keys: unknown[] }).keys).toHaveLength(1)
      // The login page names the example app by its client_name, not its UUID.
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: SPA_CLIENT_ID,
        redirect_uri: SPA_REDIRECT_URI,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })
      const login = await send(url, {
        path: `/authorize?${query.toString()}`,
        host: 'acme.localhost',
      })
      expect(login.status).toBe(200)
      expect(login.text).toContain('Acme web app')
      expect(login.text).not.toContain(SPA_CLIENT_ID)
      // The login's redirect names the issuer (RFC 9207) with the listening port too.
      const { location } = await signIn(url, 'acme.localhost', {
        clientId: SPA_CLIENT_ID,
        redirectUri: SPA_REDIRECT_URI,
        challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        username: 'alice',
        password: 'wonderland-42',
      })
      expect(location.searchParams.get('iss')).toBe(acme)
      // A reload (SIGHUP) rebuilds the tenants with the same port.
      dev.child.kill('SIGHUP')
      await eventually(
        () => expect(dev.logs.join('\n')).toContain('SIGHUP: reloading the configuration'),
        { timeoutMs: 30_000 },
      )
      const reloaded = await postForm(url, 'acme.localhost', {
        grant_type: 'password',
        username: 'bob',
        password: 'builder-42',
        client_id: 'ae47b9ad-7918-43cc-8e8c-247296b26e5f',
        client_secret: 'acme-cli-demo-secret',
      })
      expect(reloaded.status).toBe(200)
      const token = (reloaded.json as { access_token: string }).access_token
      await jwtVerify(token, new TextEncoder().encode(JWT_SECRET), { issuer: acme })
    } finally {
      dev.child.kill('SIGTERM')
    }
    expect(await dev.exited).toBe(0)
    expect(dev.logs.join('\n')).toContain('shutting down')
  })

  it('dev keeps a host that names its port, and gives the listening port to one that does not', async () => {
    const dir = join(tmp.dir, 'ports')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'p.mjs'), 'export default { authenticate: async () => null }\n')
    writeFileSync(
      join(dir, 'tenants.yaml'),
      [
        'name: fixed',
        'config:',
        "  hosts: ['fixed.localhost:8443', free-alias.localhost]",
        '  providers: [p.mjs]',
        '  clients: []',
        '---',
        'name: free',
        'config:',
        '  hosts: [free.localhost, fixed-alias.localhost:9000]',
        '  providers: [p.mjs]',
        '  clients: []',
        '---',
        'name: v6',
        'config:',
        "  hosts: ['[::1]']",
        '  providers: [p.mjs]',
        '  clients: []',
        '',
      ].join('\n'),
    )
    const dev = await startIssuer({
      command: 'dev',
      args: ['--port', '0', '--config', dir],
      cwd: REPO,
      env: {
        JWT_SECRET,
        DATABASE_URL: `sqlite:${tmp.dir}/ports.db`,
        ADMIN_PORT: '0',
      },
    })
    try {
      const port = new URL(dev.url).port
      const issuerAt = async (host: string): Promise<unknown> => {
        const res = await send(dev.url, { path: '/.well-known/oauth-authorization-server', host })
        expect(res.status).toBe(200)
        return (res.json as { issuer: unknown }).issuer
      }
      // Only the first host counts, and the Host header's port never does.
      expect(await issuerAt('fixed.localhost')).toBe('http://fixed.localhost:8443')
      expect(await issuerAt(`free-alias.localhost:${port}`)).toBe('http://fixed.localhost:8443')
      expect(await issuerAt('free.localhost:8443')).toBe(`http://free.localhost:${port}`)
      expect(await issuerAt('fixed-alias.localhost')).toBe(`http://free.localhost:${port}`)
      expect(await issuerAt('[::1]')).toBe(`http://[::1]:${port}`)
      expect(
        listeningTenants(dev)
          .map((t) => t.issuer)
          .sort(),
      ).toEqual(
        [
          `http://[::1]:${port}`,
          'http://fixed.localhost:8443',
          `http://free.localhost:${port}`,
        ].sort(),
      )
    } finally {
      dev.child.kill('SIGTERM')
    }
    expect(await dev.exited).toBe(0)
  })

  it('dev with a broken tenant file exits 1 naming it, and serves nothing meanwhile', () => {
    const dir = join(tmp.dir, 'broken')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'tenants.yaml'), 'name: broken\nconfig:\n  hosts: [a.test]\n')
    const result = runCli(['dev', '--port', '0', '--config', dir], {
      DATABASE_URL: `sqlite:${tmp.dir}/broken.db`,
      ADMIN_PORT: 'off',
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('tenants.yaml')
    expect(result.stderr).toContain('providers')
    expect(result.stderr).not.toContain('    at ')
    expect(result.stdout).not.toContain('listening')
  })

  it('start keeps the rule: https + the first host as written, whatever the port', async () => {
    const start = await startIssuer({
      command: 'start',
      args: ['--port', '0', '--config', EXAMPLES],
      cwd: REPO,
      env: {
        JWT_SECRET,
        KEY_ENCRYPTION_SECRET: 'cli-e2e-key-encryption-secret-0123456789',
        DATABASE_URL: `sqlite:${tmp.dir}/start.db`,
        ADMIN_PORT: '0',
      },
    })
    try {
      const metadata = await send(start.url, {
        path: '/.well-known/oauth-authorization-server',
        host: 'acme.localhost',
      })
      expect(metadata.status).toBe(200)
      expect(metadata.json).toMatchObject({
        issuer: 'https://acme.localhost',
        token_endpoint: 'https://acme.localhost/token',
      })
      const res = await postForm(start.url, 'acme.localhost', {
        grant_type: 'password',
        username: 'alice',
        password: 'wonderland-42',
        client_id: 'ae47b9ad-7918-43cc-8e8c-247296b26e5f',
        client_secret: 'acme-cli-demo-secret',
      })
      expect(res.status).toBe(200)
      await jwtVerify(
        (res.json as { access_token: string }).access_token,
        new TextEncoder().encode(JWT_SECRET),
        { issuer: 'https://acme.localhost' },
      )
    } finally {
      start.child.kill('SIGTERM')
    }
    expect(await start.exited).toBe(0)
  })
})

const SPA_CLIENT_ID = 'bf2d7604-7f24-4538-b46f-140f16693256'
const SPA_REDIRECT_URI = 'http://localhost:8081/callback'

/** The tenants the listening line names. */
function listeningTenants(issuer: IssuerProcess): { name: string; issuer: string }[] {
  const line = issuer.entries().find((entry) => entry.msg === 'tessera issuer listening')
  return line?.tenants as { name: string; issuer: string }[]
}
