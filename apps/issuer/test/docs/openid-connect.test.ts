import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as openidClient from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { codeBlocks, parseDocClients } from '../support/docs.js'
import { loopbackFetch } from '../support/fetch.js'
import { send } from '../support/http.js'
import { FIXTURES, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { CookieJar, redirectOf, signInWithForm, visit } from '../support/oidc.js'

const DOC = fileURLToPath(new URL('../../../../docs/openid-connect.md', import.meta.url))
const text = readFileSync(DOC, 'utf8')
const ENV = { PORTAL_CLIENT_SECRET: 'portal-secret-of-the-docs-test' }

/** The claims of the "scope | claims" table, per scope. */
function scopeClaims(): Map<string, string[]> {
  const rows = [...text.matchAll(/^\| `(profile|email)` +\| (.+?) +\|$/gm)]
  return new Map(
    rows.map((row) => [row[1]!, [...row[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)]),
  )
}

/** The claims the ID token table names, in order. */
function idTokenClaims(): string[] {
  const start = text.indexOf('| claim ')
  const table = text.slice(start, text.indexOf('\n\n', start))
  return [...table.matchAll(/^\| `([a-z_]+)` /gm)].map((m) => m[1]!)
}

async function run0(): Promise<void> {
  await Promise.resolve()
}

describe('docs/openid-connect.md', () => {
  it('shows a client configuration that the schema takes', () => {
    const [yaml] = codeBlocks(text, 'yaml')
    const { clients } = parse(yaml!) as { clients: unknown[] }
    const result = parseDocClients(DOC, clients, ENV)
    if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
    expect(result.tenants[0]?.clients[0]?.scopes).toContain('openid')
  })

  describe('against an issuer', () => {
    let issuer: InProcessIssuer
    let tmp: ReturnType<typeof tempDir>

    beforeAll(async () => {
      tmp = tempDir()
      cpSync(join(FIXTURES, 'oidc', 'providers'), join(tmp.dir, 'providers'), {
        recursive: true,
      })
      // The tenant is the page's own client configuration, served at the page's issuer.
      const [yaml] = codeBlocks(text, 'yaml')
      writeFileSync(
        join(tmp.dir, 'tenants.yaml'),
        `name: acme
config:
  hosts: [login.acme.example]
  providers: [providers/people.mjs]
${yaml!.replace(/^/gm, '  ')}`,
      )
      issuer = await startIssuer({
        databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
        config: tmp.dir,
        vars: ENV,
      })
    })
    afterAll(async () => {
      await issuer.close()
      tmp.remove()
    })

    it('lists the claims that discovery names', async () => {
      const res = await send(issuer.url, {
        path: '/.well-known/openid-configuration',
        host: 'login.acme.example',
      })
      expect(res.status).toBe(200)
      const supported = (res.json as { claims_supported: string[] }).claims_supported
      const scopes = scopeClaims()
      expect([...scopes.keys()]).toEqual(['profile', 'email'])
      const documented = [...idTokenClaims(), ...scopes.get('profile')!, ...scopes.get('email')!]
      expect([...documented].sort()).toEqual([...supported].sort())
    })

    it('signs in, reads the user and signs out with the openid-client example', async () => {
      const [example] = codeBlocks(text, 'js')
      // The example's import becomes a parameter: openid-client, whose discovery reaches the
      // test's issuer over the loopback, in plain http as the page's last paragraph says.
      const body = example!.replace(/^import .*$/gm, '')
      const client = {
        ...openidClient,
        discovery: (server: URL, clientId: string, secret: string) =>
          openidClient.discovery(
            new URL(server.href.replace(/^https:/, 'http:')),
            clientId,
            secret,
            undefined,
            {
              [openidClient.customFetch]: loopbackFetch(issuer.url),
              execute: [openidClient.allowInsecureRequests],
            },
          ),
      }
      type Session = Record<string, unknown>
      // The constructor of async functions, which has no global name.
      const prototype = Object.getPrototypeOf(run0) as { constructor: unknown }
      const AsyncFunction = prototype.constructor as new (...args: string[]) => (
        ...values: unknown[]
      ) => Promise<{
        startSignIn(session: Session): Promise<URL>
        finishSignIn(session: Session, currentUrl: URL): Promise<Record<string, unknown>>
        signOutUrl(session: Session): URL
      }>
      const run = new AsyncFunction(
        'client',
        'process',
        `${body}\nreturn { startSignIn, finishSignIn, signOutUrl }`,
      )
      const app = await run(client, { env: ENV })

      const session: Session = {}
      const jar = new CookieJar()
      const signIn = await app.startSignIn(session)
      const login = await signInWithForm(issuer.url, signIn, jar)
      const user = await app.finishSignIn(session, redirectOf(login))
      expect(user).toEqual({
        sub: 'user-alice',
        name: 'Alice Liddell',
        given_name: 'Alice',
        family_name: 'Liddell',
        preferred_username: 'alice',
        email: 'alice@example.test',
        email_verified: true,
      })

      const signOut = await visit(issuer.url, app.signOutUrl(session), jar)
      const back = redirectOf(signOut)
      expect(back.origin + back.pathname).toBe('https://portal.acme.example/signed-out')
      expect(back.searchParams.get('state')).toBe(session.state)
      expect(jar.get('tessera_session')).toBeUndefined()
    })
  })
})
