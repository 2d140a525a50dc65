import { describe, expect, it } from 'vitest'
import { sha256Hex } from './crypto.js'
import { beginLogin, completeLogin } from './login-form.js'
import type { SessionRecord } from './ports.js'
import { resumeSession } from './single-sign-on.js'
import {
  consentForm,
  harness,
  query,
  request,
  signIn,
  t0,
  tenant,
} from './test-utils/consent-harness.js'
import type { Harness } from './test-utils/consent-harness.js'

// Consent when the user rides a single sign-on session, with in-test stores.
describe('consent with a single sign-on session', () => {
  const cookie = 'c'.repeat(43)
  function withSession(h: Harness, overrides: Partial<SessionRecord> = {}): SessionRecord {
    const record: SessionRecord = {
      idHash: sha256Hex(cookie),
      tenant: 'acme',
      sid: 'sid-1',
      sub: 'alice-sub',
      claims: { name: 'Alice' },
      authTime: t0 - 60_000,
      createdAt: t0 - 60_000,
      expiresAt: t0 + 3_600_000,
      ...overrides,
    }
    h.sessions.set(record.idHash, record)
    return record
  }
  const openid = { scope: 'openid tools:read', nonce: 'n-1' }

  it('shows the page instead of the code, and Allow issues it from the session', async () => {
    const h = harness()
    const record = withSession(h)
    const browser = { cookie, address: '10.0.0.1' }
    const outcome = await resumeSession(await request(openid), browser, tenant(), h.deps)
    expect(outcome).toMatchObject({
      kind: 'consent',
      user: { sub: 'alice-sub', signIn: { sid: 'sid-1', authTime: record.authTime } },
    })
    expect(h.saved).toEqual([])
    const form = await consentForm(h, outcome)
    query(await form.post({ decision: 'allow', sessionValue: cookie }))
    expect(h.saved[0]).toMatchObject({ sid: 'sid-1', authTime: record.authTime, nonce: 'n-1' })
    // Remembered: the next request rides the session to its code.
    const again = await resumeSession(await request(openid), browser, tenant(), h.deps)
    expect(again.kind).toBe('redirect')
  })

  it('answers prompt=none with consent_required unless a consent covers the request', async () => {
    const h = harness()
    withSession(h)
    const browser = { cookie, address: '10.0.0.1' }
    const silent = { ...openid, prompt: 'none' }
    const refused = await resumeSession(await request(silent), browser, tenant(), h.deps)
    const params = query(refused)
    expect(params.get('error')).toBe('consent_required')
    expect(params.get('state')).toBe('s1')
    expect(params.get('iss')).toBe('https://acme.test')
    expect(h.saved).toEqual([])
    const form = await consentForm(
      h,
      await resumeSession(await request(openid), browser, tenant(), h.deps),
    )
    await form.post({ decision: 'allow', sessionValue: cookie })
    const granted = await resumeSession(await request(silent), browser, tenant(), h.deps)
    expect(query(granted).get('code')).toMatch(/^[\w-]{43}$/)
  })

  it('sends Allow to the login form once the session has ended', async () => {
    const h = harness()
    withSession(h)
    const browser = { cookie, address: '10.0.0.1' }
    const form = await consentForm(
      h,
      await resumeSession(await request(openid), browser, tenant(), h.deps),
    )
    withSession(h, { endedAt: t0 })
    const outcome = await form.post({ decision: 'allow', sessionValue: cookie })
    expect(outcome).toMatchObject({
      kind: 'retry',
      message: 'Your sign-in has ended. Sign in again.',
    })
    expect(h.saved).toEqual([])
    expect(h.consents.records.size).toBe(0)
  })

  it('asks once for a loopback redirect URI: the consent page stands for "Continue as"', async () => {
    const h = harness()
    withSession(h)
    const browser = { cookie, address: '10.0.0.1' }
    const loopback = { ...openid, redirect_uri: 'http://127.0.0.1:5123/cb' }
    const first = await resumeSession(await request(loopback), browser, tenant(), h.deps)
    expect(first.kind).toBe('consent')
    await (await consentForm(h, first)).post({ decision: 'allow', sessionValue: cookie })
    // Consent remembered: the loopback click is still asked for.
    const second = await resumeSession(await request(loopback), browser, tenant(), h.deps)
    expect(second.kind).toBe('confirm')
  })

  it('asks after "Continue as" when the consent lapsed before the click', async () => {
    const h = harness()
    withSession(h)
    const browser = { cookie, address: '10.0.0.1' }
    const loopback = { ...openid, redirect_uri: 'http://127.0.0.1:5123/cb' }
    const first = await resumeSession(await request(loopback), browser, tenant(), h.deps)
    await (await consentForm(h, first)).post({ decision: 'allow', sessionValue: cookie })
    const confirm = await resumeSession(await request(loopback), browser, tenant(), h.deps)
    if (confirm.kind !== 'confirm') throw new Error(`expected "Continue as", got ${confirm.kind}`)
    const form = await beginLogin(confirm.request, tenant(), h.deps, { sid: confirm.sid })
    h.consents.records.clear()
    const outcome = await completeLogin(
      {
        csrfToken: form.csrfToken,
        bindingValue: form.bindingValue,
        username: undefined,
        password: undefined,
        sessionValue: cookie,
        address: '10.0.0.1',
      },
      tenant(),
      h.deps,
    )
    expect(outcome).toMatchObject({ kind: 'consent', user: { signIn: { sid: 'sid-1' } } })
    expect(h.saved).toHaveLength(1)
  })

  it('starts the session at sign-in and hands its cookie over with the consent page', async () => {
    const h = harness()
    const outcome = await signIn(h, await request(openid))
    expect(outcome.kind).toBe('consent')
    const session = (outcome as { session?: { value: string } }).session
    expect(session?.value).toMatch(/^[\w-]{43}$/)
    const form = await consentForm(h, outcome)
    query(await form.post({ decision: 'allow', sessionValue: session?.value }))
    expect(h.saved[0]).toMatchObject({ sub: 'alice-sub', sid: 'id-1', authTime: t0 })
  })
})
