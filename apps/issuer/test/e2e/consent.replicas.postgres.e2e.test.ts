/**
 * Consent on two issuers (replicas) sharing a PostgreSQL database: a consent page shown by one
 * is answered at the other, once, and what the user allowed is remembered by both.
 */
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CONSENT,
  consentTenant,
  csrfOf,
  isConsentPage,
  postConsent,
  signInAlice,
} from '../support/consent.js'
import { postForm, send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import { CookieJar, redirectOf } from '../support/oidc.js'

const tenant = consentTenant('https://app.example/callback')

describe('consent on two replicas sharing PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let tmp: ReturnType<typeof tempDir>
  let a: InProcessIssuer
  let b: InProcessIssuer
  let clientId: string

  beforeAll(async () => {
    database = await createTestDatabase()
    tmp = tempDir()
    const options = { databaseUrl: database.url, config: tenant.writeConfig(tmp.dir) }
    a = await startIssuer(options)
    b = await startIssuer(options)
    const registered = await send(a.url, {
      method: 'POST',
      path: '/register',
      host: CONSENT.host,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Replicated Agent',
        redirect_uris: [tenant.redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
      }),
    })
    expect(registered.status, registered.text).toBe(201)
    clientId = (registered.json as { client_id: string }).client_id
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
    tmp?.remove()
  })

  it('takes the answer at B to a page of A, once, and remembers it at both', async () => {
    const plain = { scope: 'tools:read', nonce: '' }
    const jar = new CookieJar()
    const { verifier, challenge } = pkce()
    const page = await signInAlice(a.url, tenant.authorizeUrl(clientId, challenge, plain), jar)
    expect(isConsentPage(page)).toBe(true)
    const csrf = csrfOf(page)

    const allowed = redirectOf(await postConsent(b.url, csrf, 'allow', jar.header()))
    const code = allowed.searchParams.get('code')!
    const token = await postForm(a.url, CONSENT.host, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: tenant.redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    })
    expect(token.status, token.text).toBe(200)
    // Spent at B: A refuses it as well.
    const replayed = await postConsent(a.url, csrf, 'allow', jar.header())
    expect(replayed.status).toBe(400)
    expect(replayed.text).toContain('has expired or was already used')

    for (const replica of [a, b]) {
      const url = tenant.authorizeUrl(clientId, pkce().challenge, plain)
      const again = await signInAlice(replica.url, url, new CookieJar())
      expect(redirectOf(again).searchParams.get('code')).toMatch(/^[\w-]{43}$/)
    }
  })
})
