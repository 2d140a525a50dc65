import type { Client } from '@tessera/config-schema'
import type { JWTPayload, TokenSigner } from '@tessera/keys'
import { describe, expect, it } from 'vitest'
import { parseAuthorizationRequest } from '../authorize.js'
import { completeLogin } from '../login-form.js'
import { resumeSession } from '../single-sign-on.js'
import type { AuthorizationRequest, AuthorizeOutcome } from '../authorize.js'
import type { GrantDeps, TenantContext } from '../context.js'
import { sha256Hex } from '../crypto.js'
import type { AuthorizationCodeRecord, SessionRecord, SessionStore } from '../ports.js'
import { memoryConsents } from '../test-utils/memory-consents.js'
import { memoryThrottle } from '../test-utils/memory-throttle.js'
import { releasedClaims } from './claims.js'
import { accessTokenHash, issueIdToken } from './id-token.js'
import { logout } from './logout.js'
import { userInfo } from './userinfo.js'
import { memoryFailureCounter, testClientAuthPolicy } from '../test-utils/memory-failure-counter.js'

// Unit tests of the OpenID Connect decisions, with in-test stores; the store adapters have their
// contract suite, and the issuer's e2e tests (openid-client, Chromium) run all of it over HTTP.
const now = 1_700_000_000_000
const client: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: ['https://app.test/cb'],
  postLogoutRedirectUris: ['https://app.test/bye', 'https://app.test/bye?x=1'],
  scopes: ['openid', 'profile', 'email', 'orders'],
  introspection: 'own',
}
const plainClient: Client = {
  ...client,
  clientId: '11111111-2222-4333-8444-555555555555',
  scopes: ['orders'],
  postLogoutRedirectUris: [],
}
const signed: JWTPayload[] = []
const signer: TokenSigner = {
  alg: 'RS256',
  sign: (claims) => {
    signed.push(claims)
    return Promise.resolve({ token: `id-token-${signed.length}`, kid: 'k' })
  },
}

function tenantWith(overrides: Partial<TenantContext> = {}): TenantContext {
  return {
    name: 'acme',
    issuer: 'https://acme.test',
    audience: 'https://api.acme.test',
    clients: new Map([
      [client.clientId, client],
      [plainClient.clientId, plainClient],
    ]),
    signer,
    idTokenSigner: signer,
    verifyAccessToken: () => Promise.resolve(undefined),
    users: {
      authenticate: ({ username, password }) =>
        Promise.resolve(
          username === 'alice' && password === 'pw'
            ? { sub: 'alice-sub', claims: { name: 'Alice', email: 'a@x.test', department: 'R&D' } }
            : null,
        ),
    },
    accessTokenTtlSeconds: 3600,
    ...overrides,
  }
}

function memorySessions(): SessionStore & {
  sessions: Map<string, SessionRecord>
  ended: string[]
} {
  const sessions = new Map<string, SessionRecord>()
  const ended: string[] = []
  return {
    sessions,
    ended,
    createSession(session, replaces) {
      const old = replaces === undefined ? undefined : sessions.get(replaces)
      if (old !== undefined) old.endedAt ??= session.createdAt
      sessions.set(session.idHash, { ...session })
      return Promise.resolve()
    },
    findSession: (tenant, idHash) => {
      const found = sessions.get(idHash)
      return Promise.resolve(found?.tenant === tenant ? { ...found } : undefined)
    },
    endSession(tenant, sid, at) {
      ended.push(sid)
      let live = false
      for (const session of sessions.values()) {
        if (session.tenant !== tenant || session.sid !== sid) continue
        if (session.endedAt === undefined && session.expiresAt > at) live = true
        session.endedAt ??= at
      }
      return Promise.resolve(live)
    },
  }
}

function depsWith(sessions = memorySessions()): GrantDeps & {
  saved: AuthorizationCodeRecord[]
  sessionStore: ReturnType<typeof memorySessions>
} {
  const saved: AuthorizationCodeRecord[] = []
  const marks = new Set<string>()
  let ids = 0
  return {
    saved,
    sessionStore: sessions,
    throttle: memoryThrottle(),
    throttlePolicy: {
      maxFailuresPerUser: 5,
      maxFailuresPerAddress: 3,
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
      mark: (tenant, kind, id) => {
        const key = `${tenant}/${kind}/${id}`
        if (marks.has(key)) return Promise.resolve(false)
        marks.add(key)
        return Promise.resolve(true)
      },
      isMarked: (tenant, kind, id) => Promise.resolve(marks.has(`${tenant}/${kind}/${id}`)),
    },
    secrets: { getOrCreateSecret: (_name, candidate) => Promise.resolve(candidate) },
    sessions,
    sessionTtlSeconds: 8 * 3600,
    clientKeys: {} as GrantDeps['clientKeys'],
    consents: memoryConsents(),
    codeTtlSeconds: 60,
    refreshTokenTtlSeconds: 86_400,
    loginTtlSeconds: 600,
    clock: () => now,
    randomId: () => `id-${++ids}`,
  }
}

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

function authorize(
  params: Record<string, string>,
  tenant = tenantWith(),
): Promise<AuthorizeOutcome> {
  return parseAuthorizationRequest(
    Object.entries({
      client_id: client.clientId,
      redirect_uri: 'https://app.test/cb',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      state: 's1',
      ...params,
    }),
    tenant,
  )
}

async function loginRequest(pending: Promise<AuthorizeOutcome>): Promise<AuthorizationRequest> {
  const outcome = await pending
  if (outcome.kind !== 'login') throw new Error(`expected the form, got ${JSON.stringify(outcome)}`)
  return outcome.request
}

function redirectParams(location: string): URLSearchParams {
  return new URL(location).searchParams
}

function liveSession(overrides: Partial<SessionRecord> = {}): {
  cookie: string
  record: SessionRecord
} {
  const cookie = 'c'.repeat(43)
  return {
    cookie,
    record: {
      idHash: sha256Hex(cookie),
      tenant: 'acme',
      sid: 'sid-1',
      sub: 'alice-sub',
      claims: { name: 'Alice' },
      authTime: now - 600_000,
      createdAt: now - 600_000,
      expiresAt: now + 3_600_000,
      ...overrides,
    },
  }
}

describe('OpenID Connect authorization requests', () => {
  it('parses nonce, prompt, max_age and login_hint only when the scope holds openid', async () => {
    const request = await loginRequest(
      authorize({
        scope: 'openid profile',
        nonce: 'n-1',
        prompt: 'login consent',
        max_age: '30',
        login_hint: 'alice',
      }),
    )
    expect(request.openid).toEqual({
      nonce: 'n-1',
      prompt: ['login', 'consent'],
      maxAge: 30,
      loginHint: 'alice',
    })
    const plain = await loginRequest(
      authorize({ scope: 'orders', nonce: 'x'.repeat(5000), prompt: 'bogus' }),
    )
    expect(plain.openid).toBeUndefined()
  })

  it.each([
    [{ nonce: 'n'.repeat(1025) }, 'invalid_request', 'nonce must be at most 1024 characters'],
    [
      { prompt: 'none login', nonce: 'n' },
      'invalid_request',
      'prompt=none cannot be combined with others',
    ],
    [{ prompt: 'none' }, 'invalid_request', 'nonce is required with prompt=none'],
    [{ prompt: 'sideways' }, 'invalid_request', 'unsupported prompt value: sideways'],
    [
      { max_age: '-1' },
      'invalid_request',
      'max_age must be a non-negative whole number of seconds',
    ],
    [
      { max_age: '1.5' },
      'invalid_request',
      'max_age must be a non-negative whole number of seconds',
    ],
    [{ request: 'eyJ' }, 'request_not_supported', 'request objects are not supported'],
    [{ request_uri: 'https://x' }, 'request_uri_not_supported', 'request_uri is not supported'],
  ])('redirects %j with %s', async (params, error, description) => {
    const outcome = await authorize({ scope: 'openid', ...params })
    expect(outcome.kind).toBe('redirect')
    const query = redirectParams((outcome as { location: string }).location)
    expect(query.get('error')).toBe(error)
    expect(query.get('error_description')).toBe(description)
    expect(query.get('state')).toBe('s1')
    expect(query.get('iss')).toBe('https://acme.test')
  })

  it('counts a nonce in characters, not UTF-16 units', async () => {
    expect((await authorize({ scope: 'openid', nonce: '😀'.repeat(1024) })).kind).toBe('login')
  })

  it('ignores a login_hint over 256 characters', async () => {
    const request = await loginRequest(authorize({ scope: 'openid', login_hint: 'a'.repeat(257) }))
    expect(request.openid?.loginHint).toBeUndefined()
  })

  it('refuses openid for a client that does not list it', async () => {
    const outcome = await parseAuthorizationRequest(
      Object.entries({
        client_id: plainClient.clientId,
        redirect_uri: 'https://app.test/cb',
        response_type: 'code',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
        scope: 'openid',
      }),
      tenantWith(),
    )
    expect(redirectParams((outcome as { location: string }).location).get('error')).toBe(
      'invalid_scope',
    )
  })
})

describe('single sign-on', () => {
  it('issues a code from a live session without the form', async () => {
    const deps = depsWith()
    const { cookie, record } = liveSession()
    deps.sessionStore.sessions.set(record.idHash, record)
    const request = await loginRequest(authorize({ scope: 'openid', nonce: 'n-2' }))
    const outcome = await resumeSession(
      request,
      { cookie, address: '10.0.0.1' },
      tenantWith(),
      deps,
    )
    expect(outcome.kind).toBe('redirect')
    expect(redirectParams((outcome as { location: string }).location).get('code')).toMatch(
      /^[\w-]{43}$/,
    )
    expect(deps.saved[0]).toMatchObject({
      sub: 'alice-sub',
      sid: 'sid-1',
      authTime: record.authTime,
      nonce: 'n-2',
    })
  })

  it.each([
    ['prompt=login', { prompt: 'login' }],
    ['max_age=0', { max_age: '0' }],
    ['max_age shorter than the session', { max_age: '60' }],
  ])('shows the form for %s', async (_name, params) => {
    const deps = depsWith()
    const { cookie, record } = liveSession()
    deps.sessionStore.sessions.set(record.idHash, record)
    const outcome = await resumeSession(
      await loginRequest(authorize({ scope: 'openid', ...params })),
      { cookie, address: '10.0.0.1' },
      tenantWith(),
      deps,
    )
    expect(outcome.kind).toBe('login')
    expect(deps.saved).toEqual([])
  })

  it.each([
    ['no cookie', undefined, undefined],
    ['an ended session', 'c'.repeat(43), { endedAt: now - 1 }],
    ['an expired session', 'c'.repeat(43), { expiresAt: now }],
    ['a session of another tenant', 'c'.repeat(43), { tenant: 'globex' }],
  ])('answers login_required to prompt=none with %s', async (_name, cookie, overrides) => {
    const deps = depsWith()
    if (overrides !== undefined) {
      const { record } = liveSession(overrides)
      deps.sessionStore.sessions.set(record.idHash, record)
    }
    const outcome = await resumeSession(
      await loginRequest(authorize({ scope: 'openid', prompt: 'none', nonce: 'n' })),
      { cookie, address: '10.0.0.1' },
      tenantWith(),
      deps,
    )
    expect(outcome.kind).toBe('redirect')
    const query = redirectParams((outcome as { location: string }).location)
    expect(query.get('error')).toBe('login_required')
    expect(query.get('state')).toBe('s1')
    expect(outcome.clearSession).toBe(cookie !== undefined)
  })

  it('stops looking cookies up once an address has guessed too often', async () => {
    const deps = depsWith()
    const { record } = liveSession()
    deps.sessionStore.sessions.set(record.idHash, record)
    let lookups = 0
    const find = deps.sessions.findSession.bind(deps.sessions)
    deps.sessions.findSession = (tenant, hash) => {
      lookups++
      return find(tenant, hash)
    }
    const request = await loginRequest(authorize({ scope: 'openid' }))
    for (let i = 0; i < 3; i++) {
      await resumeSession(
        request,
        { cookie: `${i}`.repeat(43), address: '10.0.0.9' },
        tenantWith(),
        deps,
      )
    }
    expect(lookups).toBe(3)
    // The right cookie, but from the blocked address: not looked up, the form instead.
    const outcome = await resumeSession(
      request,
      { cookie: 'c'.repeat(43), address: '10.0.0.9' },
      tenantWith(),
      deps,
    )
    expect(outcome.kind).toBe('login')
    expect(lookups).toBe(3)
    // Another address is not affected, and a live session costs it nothing.
    for (let i = 0; i < 5; i++) {
      const ok = await resumeSession(
        request,
        { cookie: 'c'.repeat(43), address: '10.0.0.10' },
        tenantWith(),
        deps,
      )
      expect(ok.kind).toBe('redirect')
    }
  })

  it('starts a session at an OpenID login, keeping the sid for the same user, never for another', async () => {
    const deps = depsWith()
    const tenant = tenantWith()
    const { record, cookie } = liveSession({ sub: 'alice-sub' })
    deps.sessionStore.sessions.set(record.idHash, record)
    const { beginLogin } = await import('../login-form.js')
    const request = await loginRequest(authorize({ scope: 'openid', nonce: 'n-3' }))
    const form = await beginLogin(request, tenant, deps)
    const outcome = await completeLogin(
      {
        csrfToken: form.csrfToken,
        bindingValue: form.bindingValue,
        sessionValue: cookie,
        username: 'alice',
        password: 'pw',
        address: '10.0.0.1',
      },
      tenant,
      deps,
    )
    expect(outcome.kind).toBe('redirect')
    const session = (outcome as { session?: { value: string } }).session
    expect(session?.value).toMatch(/^[\w-]{43}$/)
    expect(session?.value).not.toBe(cookie)
    const created = deps.sessionStore.sessions.get(sha256Hex(session?.value ?? ''))
    expect(created).toMatchObject({ sid: 'sid-1', sub: 'alice-sub', authTime: now })
    expect(deps.sessionStore.sessions.get(record.idHash)?.endedAt).toBe(now)
    expect(deps.saved[0]).toMatchObject({ nonce: 'n-3', sid: 'sid-1', authTime: now })

    // Bob signs in on the browser Alice used: a sid of his own.
    const bobDeps = depsWith()
    const bobTenant = tenantWith({
      users: { authenticate: () => Promise.resolve({ sub: 'bob-sub' }) },
    })
    bobDeps.sessionStore.sessions.set(record.idHash, { ...record })
    const form2 = await beginLogin(request, bobTenant, bobDeps)
    const outcome2 = await completeLogin(
      {
        csrfToken: form2.csrfToken,
        bindingValue: form2.bindingValue,
        sessionValue: cookie,
        username: 'bob',
        password: 'x',
        address: '10.0.0.1',
      },
      bobTenant,
      bobDeps,
    )
    const bobSession = bobDeps.sessionStore.sessions.get(
      sha256Hex((outcome2 as { session?: { value: string } }).session?.value ?? ''),
    )
    expect(bobSession?.sid).not.toBe('sid-1')
  })

  it('starts no session for a login without openid', async () => {
    const deps = depsWith()
    const tenant = tenantWith()
    const { beginLogin } = await import('../login-form.js')
    const form = await beginLogin(await loginRequest(authorize({ scope: 'orders' })), tenant, deps)
    const outcome = await completeLogin(
      {
        csrfToken: form.csrfToken,
        bindingValue: form.bindingValue,
        username: 'alice',
        password: 'pw',
        address: '10.0.0.1',
      },
      tenant,
      deps,
    )
    expect(outcome).not.toHaveProperty('session')
    expect(deps.sessionStore.sessions.size).toBe(0)
    expect(deps.saved[0]?.sid).toBeUndefined()
  })
})

describe('ID tokens', () => {
  it('carries the OpenID claims and only the released user claims', async () => {
    signed.length = 0
    await issueIdToken(
      {
        clientId: client.clientId,
        sub: 'alice-sub',
        scopes: ['openid', 'profile'],
        claims: { name: 'Alice', email: 'a@x.test', department: 'R&D', iss: 'evil' },
        accessToken: 'at',
        expiresIn: 600,
        authTime: now - 1500,
        nonce: 'n',
        sid: 'sid-1',
      },
      tenantWith(),
      { clock: () => now },
    )
    expect(signed[0]).toEqual({
      iss: 'https://acme.test',
      sub: 'alice-sub',
      aud: client.clientId,
      azp: client.clientId,
      iat: now / 1000,
      exp: now / 1000 + 600,
      auth_time: Math.floor((now - 1500) / 1000),
      nonce: 'n',
      sid: 'sid-1',
      at_hash: accessTokenHash('at'),
      name: 'Alice',
    })
  })

  it('hashes the access token into at_hash as OpenID Connect Core §3.1.3.6 says', () => {
    // The left 128 bits of SHA-256, base64url: 22 characters.
    expect(accessTokenHash('at')).toMatch(/^[\w-]{22}$/)
    expect(accessTokenHash('at')).not.toBe(accessTokenHash('at2'))
  })

  it('releases profile and email claims by scope, nothing else', () => {
    const claims = {
      name: 'A',
      email: 'a@x',
      email_verified: true,
      department: 'R&D',
      picture: undefined,
    }
    expect(releasedClaims(['openid'], claims)).toEqual({})
    expect(releasedClaims(['openid', 'email'], claims)).toEqual({
      email: 'a@x',
      email_verified: true,
    })
    expect(releasedClaims(['profile'], claims)).toEqual({ name: 'A' })
  })
})

describe('userinfo', () => {
  const payload = {
    sub: 'alice-sub',
    scope: 'openid email',
    jti: 'only-id',
    exp: now / 1000 + 60,
    client_id: client.clientId,
    email: 'a@x',
    department: 'R&D',
  }

  it('answers sub and the released claims of a live token', async () => {
    const tenant = tenantWith({ verifyAccessToken: () => Promise.resolve(payload) })
    await expect(userInfo('t', tenant, depsWith())).resolves.toEqual({
      sub: 'alice-sub',
      email: 'a@x',
    })
  })

  it.each([
    ['a token that does not verify', undefined, 'invalid_token'],
    ['an ID token', { ...payload, at_hash: 'x', azp: client.clientId }, 'invalid_token'],
    ['a token without openid', { ...payload, scope: 'email' }, 'insufficient_scope'],
  ])('refuses %s', async (_name, verified, code) => {
    const tenant = tenantWith({ verifyAccessToken: () => Promise.resolve(verified) })
    await expect(userInfo('t', tenant, depsWith())).rejects.toMatchObject({ code })
  })

  it('refuses a revoked token', async () => {
    const deps = depsWith()
    await deps.marks.mark('acme', 'access_token_revoked', 'only-id', now + 1000, now)
    const tenant = tenantWith({ verifyAccessToken: () => Promise.resolve(payload) })
    await expect(userInfo('t', tenant, deps)).rejects.toMatchObject({ code: 'invalid_token' })
  })
})

describe('logout', () => {
  const hint = {
    iss: 'https://acme.test',
    aud: client.clientId,
    azp: client.clientId,
    sub: 'alice-sub',
  }
  const tenant = tenantWith({
    verifyIdTokenHint: (token) => Promise.resolve(token === 'good-hint' ? hint : undefined),
  })

  async function run(params: Record<string, string> | [string, string][], cookie?: string) {
    const deps = depsWith()
    const { record } = liveSession()
    deps.sessionStore.sessions.set(record.idHash, record)
    const outcome = await logout(
      Array.isArray(params) ? params : Object.entries(params),
      cookie,
      tenant,
      deps,
    )
    return { outcome, ended: deps.sessionStore.ended }
  }

  it('ends the session and redirects to a registered URI with state', async () => {
    const { outcome, ended } = await run(
      {
        id_token_hint: 'good-hint',
        post_logout_redirect_uri: 'https://app.test/bye?x=1',
        state: 'st',
      },
      'c'.repeat(43),
    )
    expect(outcome).toEqual({
      kind: 'redirect',
      location: 'https://app.test/bye?x=1&state=st',
      clearSession: true,
    })
    expect(ended).toEqual(['sid-1'])
  })

  it('accepts client_id alone to name the client, and shows a page without a redirect', async () => {
    expect(
      (await run({ client_id: client.clientId, post_logout_redirect_uri: 'https://app.test/bye' }))
        .outcome,
    ).toEqual({
      kind: 'redirect',
      location: 'https://app.test/bye',
      clearSession: false,
    })
    const { outcome, ended } = await run({}, 'c'.repeat(43))
    expect(outcome).toEqual({ kind: 'signed-out', clearSession: true })
    expect(ended).toEqual(['sid-1'])
  })

  it.each([
    [
      'an unregistered URI',
      { id_token_hint: 'good-hint', post_logout_redirect_uri: 'https://evil.test/' },
      'The post_logout_redirect_uri is not registered for this client.',
    ],
    [
      'a URI without a client',
      { post_logout_redirect_uri: 'https://app.test/bye' },
      'post_logout_redirect_uri needs id_token_hint or client_id.',
    ],
    [
      'a foreign hint',
      { id_token_hint: 'other-tenant', post_logout_redirect_uri: 'https://app.test/bye' },
      'The id_token_hint was not issued by this server.',
    ],
    [
      'a client_id the hint does not name',
      { id_token_hint: 'good-hint', client_id: plainClient.clientId },
      'The client_id does not match the id_token_hint.',
    ],
    [
      'an unknown client_id',
      { client_id: '99999999-2222-4333-8444-555555555555' },
      'The client is not known to this server.',
    ],
    [
      'a repeated parameter',
      [
        ['state', 'a'],
        ['state', 'b'],
      ],
      'The logout request repeats the parameter state.',
    ],
  ])('changes nothing for %s', async (_name, params, description) => {
    const { outcome, ended } = await run(params as Record<string, string>, 'c'.repeat(43))
    expect(outcome).toEqual({ kind: 'error-page', description })
    expect(ended).toEqual([])
  })
})
