import type { Client } from '@tessera/config-schema'
import { parseAuthorizationRequest } from '../authorize.js'
import type { AuthorizationRequest } from '../authorize.js'
import type { ConsentUser } from '../consent.js'
import type { GrantDeps, TenantContext } from '../context.js'
import { beginLogin, completeLogin } from '../login-form.js'
import type { LoginOutcome, LoginSubmission } from '../login-form.js'
import type { AuthorizationCodeRecord, SessionRecord } from '../ports.js'
import { memoryConsents } from './memory-consents.js'
import { memoryFailureCounter, testClientAuthPolicy } from './memory-failure-counter.js'
import { memoryThrottle } from './memory-throttle.js'

/**
 * The consent tests' tenant (a listed client, a registered one, two resources), stores in memory
 * and the steps a browser takes: the login form, the consent form, their posts.
 */
export const t0 = 1_700_000_000_000
export const DAY = 86_400_000
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
export const MCP = 'https://mcp.acme.test/mcp'
export const OTHER = 'https://other.acme.test/api'

export const registered: Client = {
  clientId: '0f8e2f5c-7c1d-4b7e-9a51-2f4f5b8c9d10',
  name: 'Registered Tool',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: ['https://tool.test/cb', 'http://127.0.0.1/cb'],
  postLogoutRedirectUris: [],
  scopes: ['openid', 'tools:read', 'tools:call'],
  introspection: 'own',
  dynamic: { kind: 'registered' },
}
export const listed: Client = {
  ...registered,
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  name: 'Listed App',
}
delete (listed as { dynamic?: unknown }).dynamic

export function tenant(): TenantContext {
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

export function harness() {
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
export type Harness = ReturnType<typeof harness>

export async function request(
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
export async function signIn(h: Harness, pending: AuthorizationRequest): Promise<LoginOutcome> {
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
export async function consentForm(
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

export function query(
  outcome: LoginOutcome | { kind: string; location?: string },
): URLSearchParams {
  if (outcome.kind !== 'redirect' || outcome.location === undefined) {
    throw new Error(`expected a redirect, got ${JSON.stringify(outcome)}`)
  }
  return new URL(outcome.location).searchParams
}

/** Signs in, allows, and answers the code's redirect parameters. */
export async function allow(h: Harness, pending: AuthorizationRequest): Promise<URLSearchParams> {
  const outcome = await signIn(h, pending)
  const form = await consentForm(h, outcome)
  const sessionValue = outcome.kind === 'consent' ? outcome.session?.value : undefined
  return query(await form.post({ decision: 'allow', sessionValue }))
}
