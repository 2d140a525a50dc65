import type { Client } from '@tessera/config-schema'
import type { TokenSigner } from '@tessera/keys'
import { describe, expect, it } from 'vitest'
import type { GrantDeps, TenantContext } from './context.js'
import { OAuthError } from './errors.js'
import { passwordGrant } from './password.js'
import { memoryThrottle } from './test-utils/memory-throttle.js'
import { memoryFailureCounter, testClientAuthPolicy } from './test-utils/memory-failure-counter.js'

// Unit test of the grant alone: the throttle and signer are in-test stand-ins; the issuer's
// e2e tests run the same paths over HTTP against the SQLite store and real signing.

const client: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 'secret',
  grantTypes: ['password'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: ['a', 'b'],
  introspection: 'own',
}
const signed: Record<string, unknown>[] = []
const signer: TokenSigner = {
  alg: 'HS256',
  sign: (claims) => {
    signed.push(claims)
    return Promise.resolve({ token: `token-${signed.length}` })
  },
}
const tenant: TenantContext = {
  name: 'acme',
  issuer: 'https://acme.test',
  audience: 'https://api.acme.test',
  clients: new Map([[client.clientId, client]]),
  signer,
  users: {
    authenticate: ({ username, password }) =>
      Promise.resolve(
        password === 'right'
          ? { sub: `user-${username}`, claims: { sub: 'evil', role: 'x' } }
          : null,
      ),
  },
  verifyAccessToken: () => Promise.resolve(undefined),
  accessTokenTtlSeconds: 7200,
}

// The password grant touches no code, refresh, login, mark or secret state; these fail loudly if
// it ever does.
const untouched = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(`the password grant used ${String(name)}`)
    },
  },
) as never

function deps(now = { t: 1_700_000_000_000 }): GrantDeps {
  return {
    throttle: memoryThrottle(),
    throttlePolicy: {
      maxFailuresPerUser: 3,
      maxFailuresPerAddress: 10,
      windowMs: 60_000,
      waitMs: 1_000,
      leaseMs: 11_000,
    },
    clientAuthFailures: memoryFailureCounter(),
    clientAuthPolicy: testClientAuthPolicy,
    codes: untouched,
    refreshTokens: untouched,
    marks: untouched,
    secrets: untouched,
    sessions: untouched,
    clientKeys: untouched,
    codeTtlSeconds: 60,
    refreshTokenTtlSeconds: 3600,
    consents: {} as GrantDeps['consents'],
    loginTtlSeconds: 600,
    sessionTtlSeconds: 3600,
    clock: () => now.t,
    randomId: () => 'jti-1',
  }
}

async function codeOf(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof OAuthError) return error
    throw error
  }
  throw new Error('expected an OAuthError')
}

describe('passwordGrant', () => {
  it('issues an access token and no refresh token; provider claims cannot replace ours', async () => {
    const response = await passwordGrant(
      { username: 'alice', password: 'right', scope: 'a' },
      client,
      '127.0.0.1',
      tenant,
      deps(),
    )
    expect(response).toEqual({
      access_token: expect.any(String) as string,
      token_type: 'bearer',
      expires_in: 7200,
      scope: 'a',
    })
    expect(signed.at(-1)).toMatchObject({
      sub: 'user-alice',
      role: 'x',
      iss: 'https://acme.test',
      aud: 'https://api.acme.test',
      client_id: client.clientId,
      scope: 'a',
      jti: 'jti-1',
      iat: 1_700_000_000,
      exp: 1_700_007_200,
    })
  })

  it('refuses a client that does not list the grant', async () => {
    const other = { ...client, grantTypes: ['authorization_code' as const] }
    const error = await codeOf(
      passwordGrant({ username: 'a', password: 'right' }, other, 'ip', tenant, deps()),
    )
    expect(error.code).toBe('unauthorized_client')
  })

  it('throttles a username past the limit with a retry delay, and other users still work', async () => {
    const clock = { t: 1_700_000_000_000 }
    const d = deps(clock)
    for (let i = 0; i < 3; i++) {
      const error = await codeOf(
        passwordGrant({ username: 'Alice', password: 'wrong' }, client, 'ip', tenant, d),
      )
      expect(error.code).toBe('invalid_grant')
    }
    clock.t += 10_000
    const locked = await codeOf(
      passwordGrant({ username: 'alice', password: 'right' }, client, 'ip', tenant, d),
    )
    expect(locked.code).toBe('temporarily_unavailable')
    expect(locked.retryAfterSeconds).toBe(50)
    await expect(
      passwordGrant({ username: 'bob', password: 'right' }, client, 'ip', tenant, d),
    ).resolves.toMatchObject({ token_type: 'bearer' })
    clock.t += 50_000
    await expect(
      passwordGrant({ username: 'alice', password: 'right' }, client, 'ip', tenant, d),
    ).resolves.toMatchObject({ token_type: 'bearer' })
  })
})
