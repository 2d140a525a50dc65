import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { postForm, send } from '../support/http.js'
import { FIXTURES, HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'

function passwordToken(url: string, host = HS.host) {
  return postForm(url, host, {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: HS.client,
    client_secret: HS.secret,
  })
}

/** Resolves once the real clock has reached `at` (epoch ms). */
function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())))
}

describe('configuration reload', () => {
  let tmp: ReturnType<typeof tempDir>
  let config: string
  beforeAll(() => {
    tmp = tempDir()
    config = join(tmp.dir, 'config')
    cpSync(join(FIXTURES, 'basic'), config, { recursive: true })
  })
  afterAll(() => tmp.remove())

  const tenantsFile = (): string => join(config, 'tenants.yaml')

  it('takes a valid change and keeps the last good version of a broken file', async () => {
    const original = readFileSync(tenantsFile(), 'utf8')
    const issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/reload.db`,
      config,
      vars: { KEY_PUBLISH_AHEAD_SECONDS: '2' },
    })
    try {
      const before = await passwordToken(issuer.url)
      const hsToken = (before.json as { access_token: string }).access_token
      expect(decodeProtectedHeader(hsToken).alg).toBe('HS256')

      // hs moves to RS256.
      writeFileSync(
        tenantsFile(),
        original.replace(
          '  hosts: [hs.test, alias.hs.test:8443]\n',
          '  hosts: [hs.test, alias.hs.test:8443]\n  jwt_algorithm: RS256\n',
        ),
      )
      expect(await issuer.issuer.reload()).toBe(true)
      // HS256 goes on signing for KEY_PUBLISH_AHEAD_SECONDS while the first RS256 key is
      // published; the algorithm record says until when.
      const during = await passwordToken(issuer.url)
      const duringToken = (during.json as { access_token: string }).access_token
      expect(decodeProtectedHeader(duringToken).alg).toBe('HS256')
      const [record] = await issuer.issuer.store.algorithms.listTenantAlgorithms(['hs'])
      expect(record).toMatchObject({ algorithm: 'RS256', hs256Before: true })
      await sleepUntil(record!.since)
      const after = await passwordToken(issuer.url)
      const header = decodeProtectedHeader((after.json as { access_token: string }).access_token)
      expect(header.alg).toBe('RS256')
      expect(header.kid).toMatch(/^\d{4}-\d{2}-\d{2}/)
      const jwks = await send(issuer.url, { path: '/.well-known/jwks.json', host: HS.host })
      expect((jwks.json as { keys: { kid: string }[] }).keys.map((k) => k.kid)).toContain(
        header.kid,
      )

      // A file with two problems is refused; its tenants keep their last good version, RS256.
      const lines = issuer.logs.length
      writeFileSync(
        tenantsFile(),
        original
          .replace('client_id: 11111111-1111-4111-8111-111111111111', 'client_id: not-a-uuid')
          .replace('hosts: [rs.test]', 'hosts: [hs.test]'),
      )
      expect(await issuer.issuer.reload()).toBe(false)
      const refusal = issuer.logs.slice(lines).join('\n')
      expect(refusal).toContain('configuration refused in part')
      expect(refusal).toMatch(/tenants\.yaml:\d+: config\.clients\.0\.client_id: /)
      expect(refusal).toMatch(/tenants\.yaml:\d+: spec\.hosts\.0: /)
      const still = await passwordToken(issuer.url)
      expect(decodeProtectedHeader((still.json as { access_token: string }).access_token).alg).toBe(
        'RS256',
      )
    } finally {
      writeFileSync(tenantsFile(), original)
      await issuer.close()
    }
  })

  it('reloads a running `tessera dev` on SIGHUP and on a change under the config directory', async () => {
    const original = readFileSync(tenantsFile(), 'utf8')
    const dev = await startIssuer({
      command: 'dev',
      args: ['--port', '0'],
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: config,
        DATABASE_URL: `sqlite:${tmp.dir}/dev.db`,
        ADMIN_PORT: '0',
      },
    })
    const waitFor = (text: string, from: number) =>
      eventually(() => expect(dev.logs.slice(from).join('\n')).toContain(text))
    try {
      const url = dev.url
      expect((await passwordToken(url, 'new.test')).status).toBe(404)

      // A change on disk: a new host for hs.
      let mark = dev.logs.length
      writeFileSync(
        tenantsFile(),
        original.replace(
          'hosts: [hs.test, alias.hs.test:8443]',
          'hosts: [hs.test, alias.hs.test:8443, new.test]',
        ),
      )
      await waitFor('configuration reloaded', mark)
      expect((await passwordToken(url, 'new.test')).status).toBe(200)

      // SIGHUP after the file went back (the watcher may reload first; either way it converges).
      writeFileSync(tenantsFile(), original)
      await new Promise((resolve) => setTimeout(resolve, 400))
      mark = dev.logs.length
      dev.child.kill('SIGHUP')
      await waitFor('configuration reloaded', mark)
      expect((await passwordToken(url, 'new.test')).status).toBe(404)
    } finally {
      writeFileSync(tenantsFile(), original)
      await dev.close()
    }
  })
})
