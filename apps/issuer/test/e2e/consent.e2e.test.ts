import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDocumentServer } from '../support/client-documents.js'
import type { DocumentServer } from '../support/client-documents.js'
import {
  CONSENT,
  consentTenant,
  csrfOf,
  isConsentPage,
  postConsent,
  signInAlice,
} from '../support/consent.js'
import { postForm } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import { CookieJar, redirectOf, visit } from '../support/oidc.js'

const tenant = consentTenant('https://app.example/callback')

// The consent form over HTTP, as a browser or an attacker could post it: it answers only in
// the browser it was shown to, once, and a refused post changes nothing.
describe('POST /authorize (the consent form)', () => {
  let issuer: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  let docs: DocumentServer
  let agent: string

  beforeAll(async () => {
    tmp = tempDir()
    docs = await startDocumentServer()
    agent = tenant.serveClient(docs, '/agent.json', 'Acme Agent')
    issuer = await startIssuer({
      config: tenant.writeConfig(tmp.dir),
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      vars: { FETCH_ALLOW_PRIVATE_ADDRESSES: 'true' },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    await docs?.close()
    tmp?.remove()
  })

  const signIn = (url: URL, jar: CookieJar) => signInAlice(issuer.url, url, jar)
  const post = (csrf: string, decision: string | undefined, cookie: string | undefined) =>
    postConsent(issuer.url, csrf, decision, cookie)

  async function silently(jar: CookieJar): Promise<URLSearchParams> {
    const url = tenant.authorizeUrl(agent, pkce().challenge, { prompt: 'none', state: 'quiet' })
    return redirectOf(await visit(issuer.url, url, jar)).searchParams
  }

  it('refuses a post without the binding cookie, with another one, or unanswered', async () => {
    const jar = new CookieJar()
    const { verifier, challenge } = pkce()
    const page = await signIn(tenant.authorizeUrl(agent, challenge), jar)
    expect(isConsentPage(page)).toBe(true)
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.headers['cache-control']).toBe('no-store')
    const csrf = csrfOf(page)
    const session = `tessera_session=${jar.get('tessera_session')}`

    for (const cookie of [session, `${session}; tessera_login=${'x'.repeat(43)}`]) {
      const refused = await post(csrf, 'allow', cookie)
      expect(refused.status).toBe(400)
      expect(refused.text).toContain('belongs to another browser session')
      expect(refused.headers.location).toBeUndefined()
    }
    const unanswered = await post(csrf, undefined, jar.header())
    expect(unanswered.status).toBe(400)
    expect(unanswered.text).toContain('Answer the consent form with Allow or Deny.')
    // Nothing was remembered: a silent request still needs the user.
    expect((await silently(jar)).get('error')).toBe('consent_required')

    // The form itself was not spent by any of them.
    const allowed = redirectOf(await post(csrf, 'allow', jar.header())).searchParams
    expect(allowed.get('state')).toBe('consent-state')
    const token = await postForm(issuer.url, CONSENT.host, {
      grant_type: 'authorization_code',
      code: allowed.get('code')!,
      redirect_uri: tenant.redirectUri,
      code_verifier: verifier,
      client_id: agent,
    })
    expect(token.status, token.text).toBe(200)
    expect((await silently(jar)).get('code')).toMatch(/^[\w-]{43}$/)
  })

  it('refuses a replayed form, whichever button it names', async () => {
    const jar = new CookieJar()
    const page = await signIn(
      tenant.authorizeUrl(agent, pkce().challenge, { prompt: 'consent' }),
      jar,
    )
    const csrf = csrfOf(page)
    expect(redirectOf(await post(csrf, 'deny', jar.header())).searchParams.get('error')).toBe(
      'access_denied',
    )
    for (const decision of ['allow', 'deny']) {
      const replayed = await post(csrf, decision, jar.header())
      expect(replayed.status).toBe(400)
      expect(replayed.text).toContain('has expired or was already used')
      expect(replayed.headers.location).toBeUndefined()
    }
  })

  it('asks an OAuth request without openid too, and remembers its answer for the next sign-in', async () => {
    const plain = { scope: 'tools:call', nonce: '' }
    const first = await signIn(tenant.authorizeUrl(agent, pkce().challenge, plain), new CookieJar())
    expect(isConsentPage(first)).toBe(true)
    expect(first.headers['set-cookie']?.some((c) => c.startsWith('tessera_session='))).toBe(false)
    const jar = new CookieJar()
    const again = await signIn(tenant.authorizeUrl(agent, pkce().challenge, plain), jar)
    const allowed = redirectOf(await post(csrfOf(again), 'allow', jar.header()))
    expect(allowed.searchParams.get('code')).toMatch(/^[\w-]{43}$/)
    const remembered = await signIn(
      tenant.authorizeUrl(agent, pkce().challenge, plain),
      new CookieJar(),
    )
    expect(redirectOf(remembered).searchParams.get('code')).toMatch(/^[\w-]{43}$/)
    const asked = await signIn(
      tenant.authorizeUrl(agent, pkce().challenge, { ...plain, prompt: 'consent' }),
      new CookieJar(),
    )
    expect(isConsentPage(asked)).toBe(true)
  })
  it('answers one form posted 12 times at once exactly once, with one code', async () => {
    const jar = new CookieJar()
    const page = await signIn(
      tenant.authorizeUrl(agent, pkce().challenge, { prompt: 'consent' }),
      jar,
    )
    const csrf = csrfOf(page)
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(csrf, i % 2 === 0 ? 'allow' : 'deny', jar.header()),
      ),
    )
    const redirected = answers.filter((answer) => answer.status === 303)
    expect(redirected).toHaveLength(1)
    for (const refused of answers.filter((answer) => answer.status !== 303)) {
      expect(refused.status).toBe(400)
      expect(refused.headers.location).toBeUndefined()
    }
  })
})
