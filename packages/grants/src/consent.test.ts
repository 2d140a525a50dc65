import { describe, expect, it } from 'vitest'
import { CONSENT_TTL_SECONDS } from './consent.js'
import { sha256Hex } from './crypto.js'
import { beginLogin, completeLogin } from './login-form.js'
import {
  allow,
  consentForm,
  DAY,
  harness,
  MCP,
  OTHER,
  query,
  request,
  signIn,
  t0,
  tenant,
  listed,
  registered,
} from './test-utils/consent-harness.js'

// The consent decisions with in-test stores; the issuer's Chromium tests run the same pages.
describe('consent to a client the tenant does not list', () => {
  it('never asks for a client the tenant file lists', async () => {
    const h = harness()
    const outcome = await signIn(h, await request({ client_id: listed.clientId }))
    expect(query(outcome).get('code')).toMatch(/^[\w-]{43}$/)
    expect(h.consents.records.size).toBe(0)
  })

  it('asks after the sign-in, and gives no code before Allow', async () => {
    const h = harness()
    const outcome = await signIn(h, await request({}, [MCP]))
    expect(outcome).toMatchObject({
      kind: 'consent',
      user: { sub: 'alice-sub', claims: { name: 'Alice' } },
      request: { scope: 'tools:read', resources: [MCP] },
    })
    expect(h.saved).toEqual([])
    expect(h.consents.records.size).toBe(0)
  })

  it('issues the code for the sealed user on Allow and remembers the consent for 30 days', async () => {
    const h = harness()
    const form = await consentForm(h, await signIn(h, await request({}, [MCP])))
    // The form's fields cannot name another user: only the seal does.
    const params = query(await form.post({ decision: 'allow', username: 'mallory' }))
    expect(params.get('state')).toBe('s1')
    expect(params.get('iss')).toBe('https://acme.test')
    expect(h.saved).toHaveLength(1)
    expect(h.saved[0]).toMatchObject({
      sub: 'alice-sub',
      claims: { name: 'Alice' },
      codeHash: sha256Hex(params.get('code')!),
      resources: [MCP],
    })
    expect([...h.consents.records.values()]).toEqual([
      {
        tenant: 'acme',
        subject: 'alice-sub',
        clientId: registered.clientId,
        resources: MCP,
        scopes: ['tools:read'],
        expiresAt: t0 + CONSENT_TTL_SECONDS * 1000,
      },
    ])
    expect(CONSENT_TTL_SECONDS).toBe(30 * 24 * 3600)
  })

  it('skips the page while the consent covers the request: same or fewer scopes', async () => {
    const h = harness()
    await allow(h, await request({ scope: 'tools:read tools:call' }, [MCP]))
    for (const scope of ['tools:read tools:call', 'tools:call', 'tools:read']) {
      h.clock.now += DAY
      const outcome = await signIn(h, await request({ scope }, [MCP]))
      expect(query(outcome).get('code'), scope).toMatch(/^[\w-]{43}$/)
    }
    expect(h.saved).toHaveLength(4)
  })

  it('asks again for a scope beyond the consent, and then remembers both', async () => {
    const h = harness()
    await allow(h, await request({ scope: 'tools:read' }))
    const wider = await signIn(h, await request({ scope: 'tools:read tools:call' }))
    expect(wider.kind).toBe('consent')
    await (await consentForm(h, wider)).post({ decision: 'allow' })
    const narrower = await signIn(h, await request({ scope: 'tools:call' }))
    expect(narrower.kind).toBe('redirect')
    expect([...h.consents.records.values()][0]?.scopes).toEqual(['tools:call', 'tools:read'])
  })

  it('keeps scopes consented to separately by their union', async () => {
    const h = harness()
    await allow(h, await request({ scope: 'tools:read' }))
    await allow(h, await request({ scope: 'tools:call', prompt: 'consent' }))
    expect((await signIn(h, await request({ scope: 'tools:read tools:call' }))).kind).toBe(
      'redirect',
    )
  })

  it('asks again for other resources than the consent named', async () => {
    const h = harness()
    await allow(h, await request({}, [MCP]))
    expect((await signIn(h, await request({}, [OTHER]))).kind).toBe('consent')
    expect((await signIn(h, await request())).kind).toBe('consent')
    expect((await signIn(h, await request({}, [MCP, OTHER]))).kind).toBe('consent')
    expect((await signIn(h, await request({}, [MCP]))).kind).toBe('redirect')
  })

  it('names resources in any order by one key', async () => {
    const h = harness()
    await allow(h, await request({}, [OTHER, MCP]))
    expect((await signIn(h, await request({}, [MCP, OTHER]))).kind).toBe('redirect')
  })

  it('asks again once the consent has expired', async () => {
    const h = harness()
    await allow(h, await request())
    h.clock.now = t0 + CONSENT_TTL_SECONDS * 1000 - 1
    expect((await signIn(h, await request())).kind).toBe('redirect')
    h.clock.now = t0 + CONSENT_TTL_SECONDS * 1000
    expect((await signIn(h, await request())).kind).toBe('consent')
  })

  it('asks again for prompt=consent, with or without openid', async () => {
    const h = harness()
    await allow(h, await request({ scope: 'openid tools:read', nonce: 'n' }))
    const asks: Record<string, string>[] = [
      { prompt: 'consent' },
      { scope: 'openid tools:read', prompt: 'consent' },
    ]
    for (const params of asks) {
      const pending = await request(params)
      expect(pending.promptConsent).toBe(true)
      // The seal carries prompt=consent through the login form.
      expect((await signIn(h, pending)).kind).toBe('consent')
    }
    expect((await request({ prompt: 'login' })).promptConsent).toBeUndefined()
  })

  it('answers Deny with access_denied, state and iss, and remembers nothing', async () => {
    const h = harness()
    const form = await consentForm(h, await signIn(h, await request()))
    const params = query(await form.post({ decision: 'deny' }))
    expect(params.get('error')).toBe('access_denied')
    expect(params.get('state')).toBe('s1')
    expect(params.get('iss')).toBe('https://acme.test')
    expect(params.has('code')).toBe(false)
    expect(h.saved).toEqual([])
    expect(h.consents.records.size).toBe(0)
    expect((await signIn(h, await request())).kind).toBe('consent')
  })

  it('refuses a replayed consent form, issuing no second code', async () => {
    const h = harness()
    const form = await consentForm(h, await signIn(h, await request()))
    expect((await form.post({ decision: 'allow' })).kind).toBe('redirect')
    expect(await form.post({ decision: 'allow' })).toMatchObject({ kind: 'error-page' })
    expect(await form.post({ decision: 'deny' })).toMatchObject({ kind: 'error-page' })
    expect(h.saved).toHaveLength(1)
  })

  it('refuses a form from another browser, a forged one and an expired one, changing nothing', async () => {
    const h = harness()
    const form = await consentForm(h, await signIn(h, await request()))
    expect(await form.post({ decision: 'allow', bindingValue: 'x'.repeat(43) })).toMatchObject({
      kind: 'error-page',
    })
    expect(await form.post({ decision: 'allow', bindingValue: undefined })).toMatchObject({
      kind: 'error-page',
    })
    expect(
      await form.post({ decision: 'allow', csrfToken: `${form.csrfToken.slice(0, -2)}AA` }),
    ).toMatchObject({ kind: 'error-page' })
    h.clock.now = form.expiresAt
    expect(await form.post({ decision: 'allow' })).toMatchObject({ kind: 'error-page' })
    expect(h.saved).toEqual([])
    expect(h.consents.records.size).toBe(0)
  })

  it('gives nothing without a click: no decision leaves the form unspent', async () => {
    const h = harness()
    const form = await consentForm(h, await signIn(h, await request()))
    for (const decision of [undefined, 'yes', 'Allow']) {
      expect(await form.post({ decision })).toEqual({
        kind: 'error-page',
        description: 'Answer the consent form with Allow or Deny.',
      })
    }
    expect(h.saved).toEqual([])
    expect((await form.post({ decision: 'allow' })).kind).toBe('redirect')
  })

  it('does not take a login form for a consent form', async () => {
    const h = harness()
    const login = await beginLogin(await request(), tenant(), h.deps)
    const outcome = await completeLogin(
      {
        csrfToken: login.csrfToken,
        bindingValue: login.bindingValue,
        username: undefined,
        password: undefined,
        decision: 'allow',
        address: '10.0.0.1',
      },
      tenant(),
      h.deps,
    )
    expect(outcome.kind).toBe('retry')
    expect(h.saved).toEqual([])
  })
})
