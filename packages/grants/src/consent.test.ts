import type { Client } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { parseAuthorizationRequest } from './authorize.js'
import type { AuthorizationRequest } from './authorize.js'
import { CONSENT_TTL_SECONDS } from './consent.js'
import type { ConsentUser } from './consent.js'
import type { GrantDeps, TenantContext } from './context.js'
import { sha256Hex } from './crypto.js'
import { beginLogin, completeLogin } from './login-form.js'
import type { LoginOutcome, LoginSubmission } from './login-form.js'
import type { AuthorizationCodeRecord, SessionRecord } from './ports.js'
import { resumeSession } from './single-sign-on.js'
import { memoryConsents } from './test-utils/memory-consents.js'
import { memoryFailureCounter, testClientAuthPolicy } from './test-utils/memory-failure-counter.js'
import { memoryThrottle } from './test-utils/memory-throttle.js'

// The consent decisions with in-test stores; the issuer's Chromium tests run the same pages.
const t0 = 1_700_000_000_000
const DAY = 86_400_000
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
const MCP = 'https://mcp.acme.test/mcp'
const OTHER = 'https://other.acme.test/api'

const registered: Client = {
  clientId: '0f8e2f5c-7c1d-4b7e-9a51-2f4f5b8c9d10',
  name: 'Registered Tool',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: ['https://tool.test/cb', 'http://127.0.0.1/cb'],
  postLogoutRedirectUris: [],
  scopes: ['openid', 'tools:read', 'tools:call'],
  introspection: 'own',
  dynamic: { kind: 'registered' },
}
const listed: Client = {
  ...registered,
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  name: 'Listed App',
}
delete (listed as { dynamic?: unknown }).dynamic

function tenant(): TenantContext {
  return {
    name: 'acme',
    issuer: 'https://acme.test',
    audience: 'https://api.acme.test',
    clients: new Map([[listed.clientId, listed]]),
    dynamicClients: {
      find: (id) => Promise.resolve(id === registered.clientId ? registered : undefined),
    },
    resources: [{ uri: MCP }, { uri: OTHER }],
    signer: { alg: 'HS256', sign: () => Promise.resolve({ token: 't', kid: 'k' }) },
    verifyAccessToken: () => Promise.resolve(undefined),
    users: {
      authenticate: ({ username, password }) =>
        Promise.resolve(
          username === 'alice' && password === 'pw'
            ? { sub: 'alice-sub', claims: { name: 'Alice' } }
            : null,
        ),
    },
    accessTokenTtlSeconds: 3600,
  }
}

function harness() {
  const clock = { now: t0 }
  const saved: AuthorizationCodeRecord[] = []
  const marks = new Set<string>()
  const sessions = new Map<string, SessionRecord>()
  const consents = memoryConsents()
  let ids = 0
  const deps: GrantDeps = {
    throttle: memoryThrottle(),
    throttlePolicy: {
      maxFailuresPerUser: 5,
      maxFailuresPerAddress: 50,
      windowMs: 60_000,
      waitMs: 1_000,
      leaseMs: 11_000,
    },
    clientAuthFailures: memoryFailureCounter(),
    clientAuthPolicy: testClientAuthPolicy,
    codes: {
      saveCode: (code) => {
        saved.push(code)
        return Promise.resolve()
      },
      findCode: () => Promise.resolve(undefined),
      redeemCode: () => Promise.resolve(false),
    },
    refreshTokens: {} as GrantDeps['refreshTokens'],
    marks: {
      mark: (tenantName, kind, id) => {
        const key = `${tenantName}/${kind}/${id}`
        if (marks.has(key)) return Promise.resolve(false)
        marks.add(key)
        return Promise.resolve(true)
      },
      isMarked: (tenantName, kind, id) => Promise.resolve(marks.has(`${tenantName}/${kind}/${id}`)),
    },
    secrets: { getOrCreateSecret: (_name, candidate) => Promise.resolve(candidate) },
    consents,
    sessions: {
      createSession: (session) => {
        sessions.set(session.idHash, { ...session })
        return Promise.resolve()
      },
      findSession: (tenantName, idHash) => {
        const found = sessions.get(idHash)
        return Promise.resolve(found?.tenant === tenantName ? { ...found } : undefined)
      },
      endSession: () => Promise.resolve(false),
    },
    sessionTtlSeconds: 8 * 3600,
    clientKeys: {} as GrantDeps['clientKeys'],
    codeTtlSeconds: 60,
    refreshTokenTtlSeconds: 86_400,
    loginTtlSeconds: 600,
    clock: () => clock.now,
    randomId: () => `id-${++ids}`,
  }
  return { deps, clock, saved, consents, sessions }
}
type Harness = ReturnType<typeof harness>

async function request(
  params: Record<string, string> = {},
  resources: string[] = [],
): Promise<AuthorizationRequest> {
  const entries = Object.entries<string>({
    client_id: registered.clientId,
    redirect_uri: 'https://tool.test/cb',
    response_type: 'code',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    scope: 'tools:read',
    state: 's1',
    ...params,
  })
  for (const uri of resources) entries.push(['resource', uri])
  const outcome = await parseAuthorizationRequest(entries, tenant())
  if (outcome.kind !== 'login') throw new Error(`expected the form, got ${JSON.stringify(outcome)}`)
  return outcome.request
}

/** Shows the login form for `pending` and posts alice's password from the same browser. */
async function signIn(h: Harness, pending: AuthorizationRequest): Promise<LoginOutcome> {
  const form = await beginLogin(pending, tenant(), h.deps)
  return completeLogin(
    {
      csrfToken: form.csrfToken,
      bindingValue: form.bindingValue,
      username: 'alice',
      password: 'pw',
      address: '10.0.0.1',
    },
    tenant(),
    h.deps,
  )
}

/** The consent form the issuer would render for a `consent` outcome. */
async function consentForm(
  h: Harness,
  outcome: LoginOutcome | { kind: string; request?: AuthorizationRequest; user?: ConsentUser },
) {
  if (outcome.kind !== 'consent' || outcome.request === undefined || outcome.user === undefined) {
    throw new Error(`expected the consent page, got ${JSON.stringify(outcome)}`)
  }
  const form = await beginLogin(outcome.request, tenant(), h.deps, { user: outcome.user })
  return {
    ...form,
    post: (fields: Partial<LoginSubmission> = {}) =>
      completeLogin(
        {
          csrfToken: form.csrfToken,
          bindingValue: form.bindingValue,
          username: undefined,
          password: undefined,
          address: '10.0.0.1',
          ...fields,
        },
        tenant(),
        h.deps,
      ),
  }
}

function query(outcome: LoginOutcome | { kind: string; location?: string }): URLSearchParams {
  if (outcome.kind !== 'redirect' || outcome.location === undefined) {
    throw new Error(`expected a redirect, got ${JSON.stringify(outcome)}`)
  }
  return new URL(outcome.location).searchParams
}

/** Signs in, allows, and answers the code's redirect parameters. */
async function allow(h: Harness, pending: AuthorizationRequest): Promise<URLSearchParams> {
  const outcome = await signIn(h, pending)
  const form = await consentForm(h, outcome)
  const sessionValue = outcome.kind === 'consent' ? outcome.session?.value : undefined
  return query(await form.post({ decision: 'allow', sessionValue }))
}

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
