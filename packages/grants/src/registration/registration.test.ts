import { describe, expect, it, vi } from 'vitest'
import { sha256Hex } from '../crypto.js'
import type { ConsentStore } from '../dynamic-ports.js'
import { OAuthError } from '../errors.js'
import { memoryFailureCounter } from '../test-utils/memory-failure-counter.js'
import { memoryRegistrations } from '../test-utils/memory-registrations.js'
import { REGISTRATIONS_PER_ADDRESS } from './admission.js'
import {
  admitRegistration,
  deleteRegistration,
  parseRegistrationBody,
  readRegistration,
  registerClient,
  updateRegistration,
} from './registration.js'
import type { RegistrationTenant } from './registration.js'

const URI = 'https://app.example.com/callback'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

function setup(config: Partial<RegistrationTenant['config']> = {}) {
  const tenant: RegistrationTenant = {
    name: 'acme',
    issuer: 'https://acme.example.com',
    config: {
      registration: true,
      metadataDocuments: false,
      scopes: ['tools:read', 'tools:call'],
      maxRegistrations: 100,
      ...config,
    },
  }
  let now = 1_700_000_000_123
  const deleteConsents = vi.fn((_tenant: string, _clientId: string) => Promise.resolve())
  const consents: ConsentStore = { saveConsent: vi.fn(), findConsent: vi.fn(), deleteConsents }
  const deps = {
    registrations: memoryRegistrations(),
    consents,
    rate: memoryFailureCounter(),
    clock: () => now,
  }
  return { tenant, deps, deleteConsents, advance: (ms: number) => (now += ms) }
}

async function rejection(promise: Promise<unknown>): Promise<OAuthError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  if (!(error instanceof OAuthError))
    throw new Error(`expected an OAuthError, got ${String(error)}`)
  return error
}

const bearer = (token: unknown) => `Bearer ${String(token)}`

describe('registerClient', () => {
  it('answers a confidential client with its secret and tokens once, storing only digests', async () => {
    const { tenant, deps } = setup()
    const answer = await registerClient({ redirect_uris: [URI], client_name: 'App' }, tenant, deps)
    expect(answer).toMatchObject({
      client_id_issued_at: 1_700_000_000,
      client_secret_expires_at: 0,
      redirect_uris: [URI],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'tools:read tools:call',
      client_name: 'App',
    })
    expect(answer.client_id).toMatch(UUID)
    expect(answer.registration_client_uri).toBe(
      `https://acme.example.com/register/${String(answer.client_id)}`,
    )
    const secret = answer.client_secret as string
    const token = answer.registration_access_token as string
    expect(secret.length).toBeGreaterThanOrEqual(43)
    expect(token).not.toBe(secret)
    const stored = deps.registrations.records.get(`acme\n${String(answer.client_id)}`)
    expect(stored?.secretHash).toBe(sha256Hex(secret))
    expect(stored?.registrationTokenHash).toBe(sha256Hex(token))
    expect(JSON.stringify(stored)).not.toContain(secret)
    expect(JSON.stringify(stored)).not.toContain(token)
  })

  it('gives a public client no secret', async () => {
    const { tenant, deps } = setup()
    const answer = await registerClient(
      { redirect_uris: [URI], token_endpoint_auth_method: 'none' },
      tenant,
      deps,
    )
    expect(answer).not.toHaveProperty('client_secret')
    expect(answer).not.toHaveProperty('client_secret_expires_at')
    expect(deps.registrations.records.get(`acme\n${String(answer.client_id)}`)).not.toHaveProperty(
      'secretHash',
    )
  })

  it('refuses past max_registrations, naming the limit', async () => {
    const { tenant, deps } = setup({ maxRegistrations: 2 })
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => registerClient({ redirect_uris: [URI] }, tenant, deps)),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2)
    const refused = results.find((r) => r.status === 'rejected')
    expect((refused as PromiseRejectedResult).reason).toMatchObject({
      code: 'invalid_client_metadata',
      description: 'this server holds its limit of 2 registered clients; no more can be registered',
    })
  })
})

describe('admitRegistration', () => {
  it('requires the initial access token when one is configured', async () => {
    const { tenant, deps } = setup({ registrationToken: 'initial-token-0123456789' })
    const missing = await rejection(
      admitRegistration({ authorization: undefined, address: '10.0.0.1' }, tenant, deps),
    )
    expect(missing).toMatchObject({ code: 'invalid_token', challenge: 'Bearer' })
    const wrong = await rejection(
      admitRegistration(
        { authorization: bearer('initial-token-0123456788'), address: '10.0.0.1' },
        tenant,
        deps,
      ),
    )
    expect(wrong.description).toBe('the initial access token is not valid')
    await admitRegistration(
      { authorization: bearer('initial-token-0123456789'), address: '10.0.0.1' },
      tenant,
      deps,
    )
  })

  it('lets 20 requests a minute through per address, then answers 429 until the window ends', async () => {
    const { tenant, deps, advance } = setup()
    const admit = (address: string) =>
      admitRegistration({ authorization: undefined, address }, tenant, deps)
    for (let i = 0; i < REGISTRATIONS_PER_ADDRESS; i++) await admit('2001:db8::1')
    advance(15_000)
    const refused = await rejection(admit('2001:db8::2'))
    expect(refused).toMatchObject({ code: 'temporarily_unavailable', retryAfterSeconds: 45 })
    await admit('2001:db8:0:1::1')
    advance(45_000)
    await admit('2001:db8::1')
  })
})

describe('parseRegistrationBody', () => {
  it('takes JSON only', () => {
    expect(parseRegistrationBody('{"a":1}', 'application/json; charset=utf-8')).toEqual({ a: 1 })
    expect(() => parseRegistrationBody('{"a":1}', 'application/x-www-form-urlencoded')).toThrow(
      'the request body must be application/json',
    )
    expect(() => parseRegistrationBody('{"a":1}', undefined)).toThrow('application/json')
    expect(() => parseRegistrationBody('{"a":', 'application/json')).toThrow(
      'the request body is not valid JSON',
    )
  })
})

describe('RFC 7592 management', () => {
  async function registered(fields: Record<string, unknown> = {}) {
    const context = setup()
    const answer = await registerClient(
      { redirect_uris: [URI], ...fields },
      context.tenant,
      context.deps,
    )
    const clientId = answer.client_id as string
    const authorization = bearer(answer.registration_access_token)
    return { ...context, answer, clientId, authorization }
  }

  it('reads a registration with the token presented and without the secret', async () => {
    const { tenant, deps, answer, clientId, authorization } = await registered({
      client_name: 'App',
    })
    const read = await readRegistration(
      { clientId: clientId.toUpperCase(), authorization },
      tenant,
      deps,
    )
    const rest = { ...answer }
    delete rest.client_secret
    delete rest.client_secret_expires_at
    expect(read).toEqual(rest)
  })

  it('answers the same invalid_token for a wrong token, no token, an unknown client and a non-UUID', async () => {
    const { tenant, deps, clientId, authorization } = await registered()
    const attempts = [
      { clientId, authorization: bearer('wrong') },
      { clientId, authorization: undefined },
      { clientId, authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { clientId: '0b6c1a52-4c8e-4b59-9d0f-6f0b2a1e9c11', authorization },
      { clientId: 'not-a-uuid', authorization },
    ]
    for (const request of attempts) {
      const error = await rejection(readRegistration(request, tenant, deps))
      expect(error).toMatchObject({ code: 'invalid_token', challenge: 'Bearer' })
    }
  })

  it('replaces the metadata on PUT: omitted fields go, the secret stays', async () => {
    const { tenant, deps, answer, clientId, authorization, advance } = await registered({
      client_name: 'App',
      scope: 'tools:read',
    })
    advance(1000)
    const updated = await updateRegistration(
      {
        clientId,
        authorization,
        body: {
          client_id: clientId,
          client_secret: answer.client_secret,
          redirect_uris: ['http://127.0.0.1/cb'],
          token_endpoint_auth_method: 'client_secret_post',
          registration_access_token: 'ignored',
        },
      },
      tenant,
      deps,
    )
    expect(updated).toEqual({
      client_id: clientId,
      client_id_issued_at: answer.client_id_issued_at,
      registration_access_token: answer.registration_access_token,
      registration_client_uri: answer.registration_client_uri,
      redirect_uris: ['http://127.0.0.1/cb'],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      scope: 'tools:read tools:call',
    })
    const stored = deps.registrations.records.get(`acme\n${clientId}`)
    expect(stored?.secretHash).toBe(sha256Hex(answer.client_secret as string))
    expect(stored?.updatedAt).toBe(stored!.createdAt + 1000)
  })

  it.each([
    [{ client_id: undefined }, 'client_id: must be'],
    [{ client_id: '0b6c1a52-4c8e-4b59-9d0f-6f0b2a1e9c11' }, 'client_id: must be'],
    [{ client_secret: 'chosen-by-the-client' }, 'client_secret: does not match'],
    [{ token_endpoint_auth_method: 'none' }, 'a confidential client cannot become public'],
    [{ redirect_uris: ['http://evil.example/cb'] }, 'redirect_uris[0]: http is allowed only'],
  ])('refuses a PUT with %j and changes nothing', async (change, description) => {
    const { tenant, deps, clientId, authorization } = await registered()
    const before = structuredClone(deps.registrations.records.get(`acme\n${clientId}`))
    const body = { client_id: clientId, redirect_uris: [URI], ...change }
    const error = await rejection(
      updateRegistration({ clientId, authorization, body }, tenant, deps),
    )
    expect(error.description).toContain(description)
    expect(deps.registrations.records.get(`acme\n${clientId}`)).toEqual(before)
  })

  it('deletes a registration and its consents; its token stops working', async () => {
    const { tenant, deps, deleteConsents, clientId, authorization } = await registered()
    await deleteRegistration({ clientId, authorization }, tenant, deps)
    expect(deleteConsents).toHaveBeenCalledWith('acme', clientId)
    expect(deps.registrations.records.size).toBe(0)
    const again = await rejection(deleteRegistration({ clientId, authorization }, tenant, deps))
    expect(again.code).toBe('invalid_token')
  })
})
