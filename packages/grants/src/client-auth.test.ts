import type { Client } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { authenticateClient } from './client-auth.js'

const confidential: Client = {
  clientId: '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11',
  clientSecret: 's3cr3t: with spaces+plus',
  grantTypes: ['password'],
  redirectUris: [],
  scopes: [],
  introspection: 'own',
}
const publicClient: Client = {
  clientId: '11111111-2222-4333-8444-555555555555',
  grantTypes: ['authorization_code'],
  redirectUris: ['http://localhost/cb'],
  scopes: [],
  introspection: 'own',
}
const clients = new Map([confidential, publicClient].map((c) => [c.clientId, c]))

function basic(id: string, secret: string): string {
  const encode = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

describe('authenticateClient', () => {
  it('accepts client_secret in the body', () => {
    const result = authenticateClient(
      { client_id: confidential.clientId, client_secret: confidential.clientSecret! },
      undefined,
      clients,
    )
    expect(result.method).toBe('client_secret_post')
  })

  it('accepts form-encoded HTTP Basic credentials', () => {
    const result = authenticateClient(
      {},
      basic(confidential.clientId, confidential.clientSecret!),
      clients,
    )
    expect(result).toMatchObject({ method: 'client_secret_basic', client: confidential })
  })

  it('refuses a wrong secret with invalid_client and a Basic challenge when Basic was used', () => {
    expect(() => authenticateClient({}, basic(confidential.clientId, 'nope'), clients)).toThrow(
      expect.objectContaining({ code: 'invalid_client', challenge: 'Basic' }),
    )
    expect(() =>
      authenticateClient(
        { client_id: confidential.clientId, client_secret: 'nope' },
        undefined,
        clients,
      ),
    ).toThrow(expect.objectContaining({ code: 'invalid_client', challenge: undefined }))
  })

  it('refuses Basic together with client_secret in the body', () => {
    expect(() =>
      authenticateClient(
        { client_secret: 'x' },
        basic(confidential.clientId, confidential.clientSecret!),
        clients,
      ),
    ).toThrow(expect.objectContaining({ code: 'invalid_request' }))
  })

  it('refuses a body client_id that differs from the Basic one', () => {
    expect(() =>
      authenticateClient(
        { client_id: publicClient.clientId },
        basic(confidential.clientId, confidential.clientSecret!),
        clients,
      ),
    ).toThrow(expect.objectContaining({ code: 'invalid_request' }))
  })

  it('refuses an unknown client, a missing secret and a secret sent by a public client', () => {
    const cases: Record<string, string>[] = [
      { client_id: '00000000-0000-4000-8000-000000000000', client_secret: 'x' },
      { client_id: confidential.clientId },
      { client_id: publicClient.clientId, client_secret: 'x' },
    ]
    for (const params of cases) {
      expect(() => authenticateClient(params, undefined, clients)).toThrow(
        expect.objectContaining({ code: 'invalid_client' }),
      )
    }
  })

  it('lets a public client in with its client_id alone', () => {
    expect(
      authenticateClient({ client_id: publicClient.clientId }, undefined, clients).method,
    ).toBe('none')
  })

  it('asks for client_id when there is no client at all', () => {
    expect(() => authenticateClient({}, undefined, clients)).toThrow(
      expect.objectContaining({ code: 'invalid_request', description: 'client_id is required' }),
    )
  })

  it('checks each configuration’s own secret, the digests it keeps notwithstanding', () => {
    const reloaded: Client = { ...confidential, clientSecret: 'the-new-secret' }
    const after = new Map([[reloaded.clientId, reloaded]])
    const attempt = (secret: string, map: ReadonlyMap<string, Client>) => () =>
      authenticateClient(
        { client_id: confidential.clientId, client_secret: secret },
        undefined,
        map,
      )
    expect(attempt(confidential.clientSecret!, clients)).not.toThrow()
    expect(attempt('the-new-secret', after)).not.toThrow()
    expect(attempt(confidential.clientSecret!, after)).toThrow(
      expect.objectContaining({ code: 'invalid_client' }),
    )
    expect(attempt('the-new-secret', clients)).toThrow(
      expect.objectContaining({ code: 'invalid_client' }),
    )
    // Even the same object, changed in place, is compared against its current secret.
    const mutable: Client = { ...confidential }
    const one = new Map([[mutable.clientId, mutable]])
    expect(attempt(confidential.clientSecret!, one)).not.toThrow()
    mutable.clientSecret = 'changed'
    expect(attempt(confidential.clientSecret!, one)).toThrow(
      expect.objectContaining({ code: 'invalid_client' }),
    )
    expect(attempt('changed', one)).not.toThrow()
  })
})
