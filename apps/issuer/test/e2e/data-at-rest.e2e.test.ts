import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { postForm, send } from '../support/http.js'
import { CLI, runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, RS, startIssuer, tempDir } from '../support/issuer.js'

const KEY_ENCRYPTION_SECRET = 'e2e-key-encryption-secret-for-start-0123456789'
const REFUSAL_LINE = (tenants: string): string =>
  `environment: KEY_ENCRYPTION_SECRET: not set: tessera start refuses to serve ${tenants} ` +
  'would be stored in clear); make a secret with: openssl rand -base64 32'

/**
 * A tenant file of one tenant with one password client; alice / alice-password signs in. A
 * client that lists `openid` makes the tenant an OpenID Connect tenant, whatever its algorithm.
 */
function tenantYaml(
  name: string,
  algorithm: 'HS256' | 'RS256',
  client: string,
  scopes = ['read'],
): string {
  return [
    `name: ${name}`,
    'config:',
    `  hosts: [${name}.test]`,
    `  jwt_algorithm: ${algorithm}`,
    '  providers: [providers/users.mjs]',
    '  clients:',
    `    - client_id: ${client}`,
    `      client_secret: ${name}-client-secret`,
    '      grant_types: [password]',
    `      scopes: [${scopes.join(', ')}]`,
    '',
  ].join('\n')
}

/** A configuration directory holding `tenants`, with the fixture provider script. */
function configDir(
  root: string,
  name: string,
  tenants: [string, 'HS256' | 'RS256', string, string[]?][],
): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'providers'), { recursive: true })
  copyFileSync(
    join(FIXTURES, 'basic', 'providers', 'users.mjs'),
    join(dir, 'providers', 'users.mjs'),
  )
  for (const [tenant, algorithm, client, scopes] of tenants) {
    writeFileSync(join(dir, `${tenant}.yaml`), tenantYaml(tenant, algorithm, client, scopes))
  }
  return dir
}

const ALPHA = 'aaaaaaaa-1111-4111-8111-111111111111'
const BETA = 'bbbbbbbb-2222-4222-8222-222222222222'
const GAMMA = 'cccccccc-3333-4333-8333-333333333333'

// Each test spawns the CLI; on a loaded 2-core machine one spawn can take seconds.
describe('tessera start without KEY_ENCRYPTION_SECRET', { timeout: 90_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('exits 1 before listening, in one line naming every RS256 tenant and how to make a secret', async () => {
    const config = configDir(tmp.dir, 'mixed', [
      ['alpha', 'RS256', ALPHA],
      ['beta', 'RS256', BETA],
      ['gamma', 'HS256', GAMMA],
    ])
    const data = join(tmp.dir, 'mixed-data')
    const result = await runCli(['start', '--host', '127.0.0.1', '--port', '0'], {
      JWT_SECRET,
      TESSERA_CONFIG: config,
      DATABASE_URL: `sqlite:${join(data, 'tessera.db')}`,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toBe(
      'tessera: configuration problems:\n' +
        `${REFUSAL_LINE('RS256 tenants "alpha", "beta" (their private keys')}\n`,
    )
    expect(result.stdout).not.toContain('tessera issuer listening')
    expect(result.stdout + result.stderr).not.toContain(JWT_SECRET)
    // Refused before the store was opened: nothing was created, no key was made in clear.
    expect(existsSync(data)).toBe(false)
  })

  it('refuses HS256 tenants with OpenID Connect clients too, naming them', async () => {
    const mixed = configDir(tmp.dir, 'openid-mixed', [
      ['alpha', 'RS256', ALPHA],
      ['beta', 'HS256', BETA, ['openid', 'read']],
      ['gamma', 'HS256', GAMMA],
    ])
    const alone = configDir(tmp.dir, 'openid-alone', [
      ['beta', 'HS256', BETA, ['openid', 'read']],
      ['gamma', 'HS256', GAMMA],
    ])
    const data = join(tmp.dir, 'openid-data')
    const [started, checked] = await Promise.all([
      runCli(['start', '--host', '127.0.0.1', '--port', '0'], {
        JWT_SECRET,
        TESSERA_CONFIG: mixed,
        DATABASE_URL: `sqlite:${join(data, 'tessera.db')}`,
      }),
      runCli(['check-config'], { JWT_SECRET, TESSERA_CONFIG: alone }),
    ])
    expect(started.status).toBe(1)
    expect(started.stderr).toBe(
      'tessera: configuration problems:\n' +
        `${REFUSAL_LINE('RS256 tenant "alpha" and HS256 tenant "beta" with OpenID Connect clients (their private keys')}\n`,
    )
    expect(started.stdout).not.toContain('tessera issuer listening')
    expect(existsSync(data)).toBe(false)
    expect(checked.status).toBe(1)
    expect(checked.stderr.split('\n')).toContain(
      REFUSAL_LINE('HS256 tenant "beta" with OpenID Connect clients (its private keys'),
    )
  })

  it('check-config reports the same line; with --dev it accepts the configuration', async () => {
    const vars = { JWT_SECRET, TESSERA_CONFIG: join(FIXTURES, 'basic') }
    const [checked, dev, sealed] = await Promise.all([
      runCli(['check-config'], vars),
      runCli(['check-config', '--dev'], vars),
      runCli(['check-config'], { ...vars, KEY_ENCRYPTION_SECRET }),
    ])
    expect(checked.status).toBe(1)
    expect(checked.stderr.split('\n')).toContain(
      REFUSAL_LINE('RS256 tenant "rs" (its private keys'),
    )
    expect(dev.stderr).toBe('')
    expect(dev.status).toBe(0)
    expect(sealed.stderr).toBe('')
    expect(sealed.status).toBe(0)
  })

  it('serves HS256 tenants without it, and refuses a change that adds an RS256 tenant', async () => {
    const config = configDir(tmp.dir, 'hs-only', [['gamma', 'HS256', GAMMA]])
    const cli = await startIssuer({
      command: 'start',
      env: { JWT_SECRET, TESSERA_CONFIG: config, DATABASE_URL: `sqlite:${tmp.dir}/hs-only.db` },
    })
    try {
      const token = () =>
        postForm(cli.url, 'gamma.test', {
          grant_type: 'password',
          username: 'alice',
          password: 'alice-password',
          client_id: GAMMA,
          client_secret: 'gamma-client-secret',
        })
      expect((await token()).status).toBe(200)
      expect(cli.logs.join('\n')).toContain(
        'KEY_ENCRYPTION_SECRET is not set: RS256 tenants are refused',
      )

      // The running issuer follows TESSERA_CONFIG: the new RS256 tenant is refused as a whole.
      writeFileSync(join(config, 'alpha.yaml'), tenantYaml('alpha', 'RS256', ALPHA))
      await eventually(() => expect(cli.logs.join('\n')).toContain('configuration reload refused'))
      const refusal = cli.logs.find((line) => line.includes('configuration reload refused'))
      expect(JSON.parse(refusal ?? '{}')).toMatchObject({
        problems: [REFUSAL_LINE('RS256 tenant "alpha" (its private keys')],
      })
      expect((await token()).status).toBe(200)
      const alpha = await send(cli.url, { path: '/.well-known/jwks.json', host: 'alpha.test' })
      expect(alpha.status).toBe(404)
    } finally {
      await cli.close()
    }
  })

  it('serves RS256 tenants with it, their private keys sealed', async () => {
    const file = join(tmp.dir, 'sealed.db')
    const cli = await startIssuer({
      command: 'start',
      env: {
        JWT_SECRET,
        KEY_ENCRYPTION_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'basic'),
        DATABASE_URL: `sqlite:${file}`,
      },
    })
    try {
      const jwks = await send(cli.url, { path: '/.well-known/jwks.json', host: RS.host })
      expect((jwks.json as { keys: unknown[] }).keys).toHaveLength(1)
      expect(cli.logs.join('\n')).not.toContain(KEY_ENCRYPTION_SECRET)
    } finally {
      await cli.close()
    }
    const db = new Database(file, { readonly: true })
    try {
      expect(db.prepare('SELECT private_key FROM keys').all()).toEqual([
        { private_key: expect.stringMatching(/^enc:v1:/) as unknown },
      ])
    } finally {
      db.close()
    }
  })
})

/** The permission bits of `path`, as an octal string such as `600`. */
function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8)
}

describe('tessera start under umask 000', { timeout: 90_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('creates the data directory 0700 and the database, -wal and -shm 0600', async () => {
    const data = join(tmp.dir, 'var', 'tessera')
    const file = join(data, 'tessera.db')
    // sh sets the umask, then becomes the CLI, as a service manager with UMask=0000 would.
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        'umask 000 && exec "$@"',
        'sh',
        process.execPath,
        CLI,
        'start',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          JWT_SECRET,
          KEY_ENCRYPTION_SECRET,
          TESSERA_CONFIG: join(FIXTURES, 'basic'),
          DATABASE_URL: `sqlite:${file}`,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    let out = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8')
        const line = out.split('\n').find((l) => l.includes('tessera issuer listening'))
        if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url)
      })
      void exited.then((status) => reject(new Error(`exited ${String(status)}: ${out}`)))
    })
    try {
      // A token: the RS256 key is stored and a refresh family written through the WAL.
      const token = await postForm(url, RS.host, {
        grant_type: 'password',
        username: 'alice',
        password: 'alice-password',
        client_id: RS.client,
        client_secret: RS.secret,
      })
      expect(token.status).toBe(200)
      expect(modeOf(join(tmp.dir, 'var'))).toBe('700')
      expect(modeOf(data)).toBe('700')
      expect(modeOf(file)).toBe('600')
      expect(modeOf(`${file}-wal`)).toBe('600')
      expect(modeOf(`${file}-shm`)).toBe('600')
    } finally {
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    }
  })
})
