import type { Client } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { authenticateClient, isConfidentialClient } from './client-auth.js'
import type { ClientAuthDeps } from './client-auth.js'
import type { TokenParams } from './request.js'
import { memoryFailureCounter, testClientAuthPolicy } from './test-utils/memory-failure-counter.js'

const confidential: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 's3cr3t: with spaces+plus',
  grantTypes: ['password'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [],
  introspection: 'own',
}
const publicClient: Client = {
  clientId: '11111111-2222-4333-8444-555555555555',
  grantTypes: ['authorization_code'],
  redirectUris: ['http://localhost/cb'],
  postLogoutRedirectUris: [],
  scopes: [],
  introspection: 'own',
}
const keyClient: Client = {
  clientId: '33333333-2222-4333-8444-555555555555',
  grantTypes: ['password'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  scopes: [],
  introspection: 'own',
  tokenEndpointAuthMethod: 'private_key_jwt',
  jwksUri: 'https://keys.example/jwks',
}
const clients = new Map([confidential, publicClient, keyClient].map((c) => [c.clientId, c]))

const noKeys: ClientAuthDeps = {
  clientKeys: {
    resolve: () => Promise.reject(new Error('no key lookups in these tests')),
  },
  marks: {
    mark: () => Promise.reject(new Error('no marks in these tests')),
    isMarked: () => Promise.reject(new Error('no marks in these tests')),
  },
  clock: () => 1_700_000_000_000,
  clientAuthFailures: memoryFailureCounter(),
  clientAuthPolicy: testClientAuthPolicy,
}

function auth(
  params: TokenParams,
  authorization?: string,
  map: ReadonlyMap<string, Client> = clients,
) {
  return authenticateClient(
    { params, authorization, endpoint: 'token', address: '192.0.2.1' },
    { name: 'acme', issuer: 'http://acme.localhost', clients: map },
    noKeys,
  )
}

function basic(id: string, secret: string): string {
  const encode = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

/** HTTP Basic as authlib and requests-oauthlib send it: id and secret joined, not encoded. */
function rawBasic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
}

describe('authenticateClient', () => {
  it('accepts client_secret in the body', async () => {
    const result = await auth({
      client_id: confidential.clientId,
      client_secret: confidential.clientSecret!,
    })
    expect(result.method).toBe('client_secret_post')
  })

  it('accepts form-encoded HTTP Basic credentials', async () => {
    const result = await auth({}, basic(confidential.clientId, confidential.clientSecret!))
    expect(result).toMatchObject({ method: 'client_secret_basic', client: confidential })
  })

  it('refuses a wrong secret with invalid_client and a Basic challenge when Basic was used', async () => {
    await expect(auth({}, basic(confidential.clientId, 'nope'))).rejects.toMatchObject({
      code: 'invalid_client',
      challenge: 'Basic',
    })
    await expect(
      auth({ client_id: confidential.clientId, client_secret: 'nope' }),
    ).rejects.toMatchObject({ code: 'invalid_client', challenge: undefined })
  })

  it('refuses Basic together with client_secret in the body', async () => {
    await expect(
      auth({ client_secret: 'x' }, basic(confidential.clientId, confidential.clientSecret!)),
    ).rejects.toMatchObject({ code: 'invalid_request' })
  })

  it('refuses a body client_id that differs from the Basic one', async () => {
    await expect(
      auth(
        { client_id: publicClient.clientId },
        basic(confidential.clientId, confidential.clientSecret!),
      ),
    ).rejects.toMatchObject({ code: 'invalid_request' })
  })

  it('refuses an unknown client, a missing secret and a secret sent by a public client', async () => {
    const cases: Record<string, string>[] = [
      { client_id: '00000000-0000-4000-8000-000000000000', client_secret: 'x' },
      { client_id: confidential.clientId },
      { client_id: publicClient.clientId, client_secret: 'x' },
    ]
    for (const params of cases) {
      await expect(auth(params)).rejects.toMatchObject({ code: 'invalid_client' })
    }
  })

  it('lets a public client in with its client_id alone', async () => {
    expect((await auth({ client_id: publicClient.clientId })).method).toBe('none')
  })

  it('asks for client_id when there is no client at all', async () => {
    await expect(auth({})).rejects.toMatchObject({
      code: 'invalid_request',
      description: 'client_id is required',
    })
  })

  it('checks each configuration’s own secret, the digests it keeps notwithstanding', async () => {
    const reloaded: Client = { ...confidential, clientSecret: 'the-new-secret' }
    const after = new Map([[reloaded.clientId, reloaded]])
    const attempt = (secret: string, map: ReadonlyMap<string, Client>) =>
      auth({ client_id: confidential.clientId, client_secret: secret }, undefined, map)
    await expect(attempt(confidential.clientSecret!, clients)).resolves.toBeDefined()
    await expect(attempt('the-new-secret', after)).resolves.toBeDefined()
    await expect(attempt(confidential.clientSecret!, after)).rejects.toMatchObject({
      code: 'invalid_client',
    })
    await expect(attempt('the-new-secret', clients)).rejects.toMatchObject({
      code: 'invalid_client',
    })
    // Even the same object, changed in place, is compared against its current secret.
    const mutable: Client = { ...confidential }
    const one = new Map([[mutable.clientId, mutable]])
    await expect(attempt(confidential.clientSecret!, one)).resolves.toBeDefined()
    mutable.clientSecret = 'changed'
    await expect(attempt(confidential.clientSecret!, one)).rejects.toMatchObject({
      code: 'invalid_client',
    })
    await expect(attempt('changed', one)).resolves.toBeDefined()
  })
})

describe('authenticateClient: HTTP Basic without form-encoding', () => {
  const secrets = ['a+b', '100%', 'x%2By', 'has:colon', 'with space', 'p%zz+q r:s', '%41']

  it('accepts each secret sent as it is, and sent form-encoded', async () => {
    for (const secret of secrets) {
      const client: Client = { ...confidential, clientSecret: secret }
      const map = new Map([[client.clientId, client]])
      for (const header of [basic(client.clientId, secret), rawBasic(client.clientId, secret)]) {
        await expect(auth({}, header, map), `${secret} as ${header}`).resolves.toMatchObject({
          method: 'client_secret_basic',
        })
      }
    }
  })

  it('still refuses a secret that matches in neither form', async () => {
    const client: Client = { ...confidential, clientSecret: 'a+b' }
    const map = new Map([[client.clientId, client]])
    for (const wrong of ['a b ', 'a%2Bb%20', 'a+c', 'A+B', '']) {
      await expect(auth({}, rawBasic(client.clientId, wrong), map), wrong).rejects.toMatchObject({
        code: 'invalid_client',
      })
    }
    // The decoded form of "a%2Bb" is "a+b": the RFC's own encoding of the secret.
    await expect(auth({}, rawBasic(client.clientId, 'a%2Bb'), map)).resolves.toBeDefined()
  })

  it('finds a client whose id is not valid form-encoding, as sent', async () => {
    const odd: Client = { ...confidential, clientId: 'id%zz+1' }
    const map = new Map([[odd.clientId, odd]])
    await expect(
      auth({}, rawBasic(odd.clientId, confidential.clientSecret!), map),
    ).resolves.toMatchObject({ client: odd })
  })

  it('compares both forms every time, whichever matches', async () => {
    // Not a timing measurement: the two comparisons are unconditional in the code, and a
    // mismatch in the first form alone never refuses.
    const client: Client = { ...confidential, clientSecret: 'p%zz+q' }
    const map = new Map([[client.clientId, client]])
    await expect(auth({}, rawBasic(client.clientId, 'p%zz+q'), map)).resolves.toBeDefined()
    await expect(auth({}, basic(client.clientId, 'p%zz+q'), map)).resolves.toBeDefined()
  })
})

describe('authenticateClient: methods', () => {
  it('holds a client to its configured method', async () => {
    const basicOnly: Client = { ...confidential, tokenEndpointAuthMethod: 'client_secret_basic' }
    const postOnly: Client = { ...confidential, tokenEndpointAuthMethod: 'client_secret_post' }
    const secret = confidential.clientSecret!
    const body = { client_id: confidential.clientId, client_secret: secret }
    await expect(
      auth(body, undefined, new Map([[basicOnly.clientId, basicOnly]])),
    ).rejects.toMatchObject({
      code: 'invalid_client',
      description: 'client authentication failed: this client must use client_secret_basic',
    })
    await expect(
      auth({}, basic(confidential.clientId, secret), new Map([[basicOnly.clientId, basicOnly]])),
    ).resolves.toMatchObject({ method: 'client_secret_basic' })
    await expect(
      auth({}, basic(confidential.clientId, secret), new Map([[postOnly.clientId, postOnly]])),
    ).rejects.toMatchObject({ code: 'invalid_client', challenge: 'Basic' })
    await expect(
      auth(body, undefined, new Map([[postOnly.clientId, postOnly]])),
    ).resolves.toMatchObject({ method: 'client_secret_post' })
  })

  it('never lets a private_key_jwt client in with a secret or its client_id alone', async () => {
    for (const attempt of [
      auth({ client_id: keyClient.clientId, client_secret: 'anything' }),
      auth({}, basic(keyClient.clientId, 'anything')),
      auth({ client_id: keyClient.clientId }),
    ]) {
      await expect(attempt).rejects.toMatchObject({
        code: 'invalid_client',
        description: 'client authentication failed: this client must use private_key_jwt',
      })
    }
  })

  it('refuses half an assertion, a wrong assertion type, and an assertion with a secret', async () => {
    const type = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
    await expect(auth({ client_assertion: 'a.b.c' })).rejects.toMatchObject({
      code: 'invalid_request',
      description: `client_assertion_type must be ${type}`,
    })
    await expect(
      auth({
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
        client_assertion: 'x',
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(auth({ client_assertion_type: type })).rejects.toMatchObject({
      code: 'invalid_request',
      description: 'client_assertion is required with client_assertion_type',
    })
    await expect(
      auth({ client_assertion_type: type, client_assertion: 'a.b.c', client_secret: 'x' }),
    ).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(
      auth(
        { client_assertion_type: type, client_assertion: 'a.b.c' },
        basic(keyClient.clientId, 'x'),
      ),
    ).rejects.toMatchObject({ code: 'invalid_request' })
    await expect(
      auth({ client_assertion_type: type, client_assertion: 'not a jwt' }),
    ).rejects.toMatchObject({
      code: 'invalid_client',
      description: 'client_assertion is not a well-formed signed JWT',
    })
  })

  it('counts a private_key_jwt client as confidential', () => {
    expect(isConfidentialClient(keyClient)).toBe(true)
    expect(isConfidentialClient(confidential)).toBe(true)
    expect(isConfidentialClient(publicClient)).toBe(false)
  })
})
