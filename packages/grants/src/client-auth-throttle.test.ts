import type { Client } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { authenticateClient } from './client-auth.js'
import type { ClientAuthDeps } from './client-auth.js'
import { clientAuthKeys } from './client-auth-throttle.js'
import { OAuthError } from './errors.js'
import type { FailureCounter } from './ports.js'
import type { TokenParams } from './request.js'
import { memoryFailureCounter, testClientAuthPolicy } from './test-utils/memory-failure-counter.js'

const secretClient: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 'a-long-enough-client-secret',
  grantTypes: ['client_credentials'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [],
  introspection: 'own',
}
const publicClient: Client = { ...secretClient, clientId: 'p-1', clientSecret: undefined }
delete (publicClient as { clientSecret?: string }).clientSecret
const keyClient: Client = {
  ...publicClient,
  clientId: 'k-1',
  tokenEndpointAuthMethod: 'private_key_jwt',
  jwksUri: 'https://keys.example/jwks',
}
const clients = new Map([secretClient, publicClient, keyClient].map((c) => [c.clientId, c]))
const tenant = { name: 'acme', issuer: 'http://acme.localhost', clients }

/** A counter that records every call, over a memory counter. */
function spied(inner: FailureCounter = memoryFailureCounter()) {
  const calls: string[] = []
  const counter: FailureCounter = {
    failures: (keys, now) => {
      calls.push('failures')
      return inner.failures(keys, now)
    },
    recordFailure: (keys, window) => {
      calls.push('recordFailure')
      return inner.recordFailure(keys, window)
    },
  }
  return { counter, calls }
}

function deps(counter: FailureCounter, checked: string[] = []): ClientAuthDeps {
  return {
    clientKeys: {
      resolve: () => {
        checked.push('key')
        return Promise.reject(new Error('no key'))
      },
    },
    marks: {
      mark: () => Promise.reject(new Error('no marks')),
      isMarked: () => Promise.reject(new Error('no marks')),
    },
    clock: () => 1_700_000_000_000,
    clientAuthFailures: counter,
    clientAuthPolicy: testClientAuthPolicy,
  }
}

function auth(params: TokenParams, d: ClientAuthDeps, address = '192.0.2.1') {
  return authenticateClient(
    { params, authorization: undefined, endpoint: 'introspect', address },
    tenant,
    d,
  )
}

async function failure(promise: Promise<unknown>): Promise<OAuthError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(OAuthError)
  return error as OAuthError
}

const wrong = { client_id: secretClient.clientId, client_secret: 'wrong' }
const right = { client_id: secretClient.clientId, client_secret: secretClient.clientSecret! }
// An unsigned JWT whose sub is the key client: decodable, never verifiable.
const unsignedAssertion = `${Buffer.from('{"alg":"ES256","kid":"x"}').toString('base64url')}.${Buffer.from('{"sub":"k-1"}').toString('base64url')}.c2ln`

describe('authenticateClient: throttling failures', () => {
  it('counts each failure on the client+address and address keys, with its reason', async () => {
    const cases: [TokenParams, string, string | undefined][] = [
      [wrong, 'wrong_secret', secretClient.clientId],
      [{ client_id: secretClient.clientId }, 'missing_secret', secretClient.clientId],
      [{ client_id: 'p-1', client_secret: 'x' }, 'unexpected_secret', 'p-1'],
      [{ client_id: 'k-1', client_secret: 'x' }, 'wrong_method', 'k-1'],
      [{ client_id: 'Nobody', client_secret: 'x' }, 'unknown_client', 'Nobody'],
      [
        {
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: 'not.a.jwt',
        },
        'bad_assertion',
        undefined,
      ],
    ]
    for (const [params, reason, clientId] of cases) {
      const { counter, calls } = spied()
      const error = await failure(auth(params, deps(counter)))
      expect(error.code, reason).toBe('invalid_client')
      expect(error.clientAuthFailure).toMatchObject({ reason, clientId, endpoint: 'introspect' })
      expect(calls).toEqual(['failures', 'recordFailure'])
      const keys = clientAuthKeys(
        { tenant: 'acme', clientId, address: '192.0.2.1', endpoint: 'introspect' },
        deps(counter),
      )
      expect(
        await counter.failures(
          keys.map(({ key }) => key),
          1_700_000_000_000,
        ),
      ).toEqual(keys.map(() => ({ count: 1, resetAt: 1_700_000_060_000 })))
    }
  })

  it('refuses at the limit before the secret or the assertion is checked, counting nothing', async () => {
    const { counter, calls } = spied()
    for (let i = 0; i < 20; i++) await failure(auth(wrong, deps(counter)))
    calls.length = 0
    const refused = await failure(auth(right, deps(counter)))
    expect(refused.code).toBe('temporarily_unavailable')
    expect(refused.retryAfterSeconds).toBe(60)
    expect(refused.clientAuthFailure?.reason).toBe('throttled')
    expect(calls).toEqual(['failures'])

    // An assertion of a client locked at this address: its key is never looked up.
    const checked: string[] = []
    const assertion = {
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: unsignedAssertion,
    }
    for (let i = 0; i < 20; i++) {
      await failure(auth(assertion, deps(counter, checked), '192.0.2.9'))
    }
    expect(checked).toHaveLength(20)
    const locked = await failure(auth(assertion, deps(counter, checked), '192.0.2.9'))
    expect(locked.code).toBe('temporarily_unavailable')
    expect(checked).toHaveLength(20)
  })

  it('answers 429 for a failure that finds the count filled by concurrent ones', async () => {
    const inner = memoryFailureCounter()
    // The check sees room; by the time this failure is counted, the window is full.
    const racing: FailureCounter = {
      failures: (keys, now) => inner.failures(keys, now),
      recordFailure: () =>
        Promise.resolve({ recorded: false, blocked: 'k', resetAt: 1_700_000_030_000 }),
    }
    const error = await failure(auth(wrong, deps(racing)))
    expect(error.code).toBe('temporarily_unavailable')
    expect(error.retryAfterSeconds).toBe(30)
    expect(error.clientAuthFailure?.reason).toBe('wrong_secret')
  })

  it('counts neither successes nor malformed requests, and a success clears nothing', async () => {
    const { counter, calls } = spied()
    await auth(right, deps(counter))
    const malformed = await failure(
      auth({ client_id: secretClient.clientId, client_assertion: 'x' }, deps(counter)),
    )
    expect(malformed.code).toBe('invalid_request')
    expect(calls).toEqual(['failures'])
    await failure(auth(wrong, deps(counter)))
    await auth(right, deps(counter))
    const [perClient] = clientAuthKeys(
      { tenant: 'acme', clientId: secretClient.clientId, address: '192.0.2.1', endpoint: 'token' },
      deps(counter),
    )
    expect(await counter.failures([perClient!.key], 1_700_000_000_000)).toEqual([
      { count: 1, resetAt: 1_700_000_060_000 },
    ])
  })

  it('keys a client_id case-insensitively, per tenant and address, as bounded hashes', () => {
    const keysOf = (tenantName: string, clientId: string, address: string) =>
      clientAuthKeys(
        { tenant: tenantName, clientId, address, endpoint: 'token' },
        deps(memoryFailureCounter()),
      ).map(({ key }) => key)
    const hostile = `${'é'.repeat(10_000)}\u0000`
    expect(keysOf('acme', 'Web-App', '192.0.2.1')).toEqual(keysOf('acme', 'web-app', '192.0.2.1'))
    expect(keysOf('acme', 'web-app', '192.0.2.1')[0]).not.toBe(
      keysOf('other', 'web-app', '192.0.2.1')[0],
    )
    expect(keysOf('acme', 'web-app', '192.0.2.1')[0]).not.toBe(
      keysOf('acme', 'web-app', '192.0.2.2')[0],
    )
    for (const key of keysOf('acme', hostile, '192.0.2.1'))
      expect(key).toMatch(/^[a-z]+:[0-9a-f]{64}$/)
  })
})
