import type { Client, DynamicClientsConfig } from '@tessera/config-schema'
import type { ClientRegistrationStore, RegisteredClientRecord } from '@tessera/grants'
import { describe, expect, it, vi } from 'vitest'
import { createDynamicClientSource } from './dynamic-clients.js'

const ID = '5b1d3f0e-8a4c-4f5e-9d2b-7c6a1e0f9b3d'
const RECORD: RegisteredClientRecord = {
  tenant: 'acme',
  clientId: ID,
  registrationTokenHash: 'a'.repeat(64),
  metadata: {
    redirect_uris: ['http://127.0.0.1/cb'],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    scope: 'tools:read',
  },
  createdAt: 0,
  updatedAt: 0,
}
const CONFIG: DynamicClientsConfig = {
  registration: true,
  metadataDocuments: false,
  scopes: ['tools:read'],
  maxRegistrations: 10,
}

function registrations(): ClientRegistrationStore & { find: ReturnType<typeof vi.fn> } {
  const find = vi.fn((tenant: string, clientId: string) =>
    Promise.resolve(tenant === 'acme' && clientId === ID ? RECORD : undefined),
  )
  return {
    find,
    registerClient: vi.fn(),
    findRegisteredClient: find,
    updateRegisteredClient: vi.fn(),
    deleteRegisteredClient: vi.fn(),
  }
}

describe('createDynamicClientSource', () => {
  it('is undefined for a tenant without dynamic_clients', () => {
    expect(
      createDynamicClientSource({
        tenant: 'acme',
        config: undefined,
        registrations: registrations(),
      }),
    ).toBeUndefined()
  })

  it('finds a registered client by its UUID in either case, as the tenant allows it', async () => {
    const source = createDynamicClientSource({
      tenant: 'acme',
      config: CONFIG,
      registrations: registrations(),
    })
    await expect(source?.find(ID.toUpperCase())).resolves.toMatchObject({
      clientId: ID,
      tokenEndpointAuthMethod: 'none',
      scopes: ['tools:read'],
      dynamic: { kind: 'registered' },
    })
  })

  it('asks the store nothing for an id that is not a UUID, or while registration is off', async () => {
    const store = registrations()
    const on = createDynamicClientSource({ tenant: 'acme', config: CONFIG, registrations: store })
    await expect(on?.find('not-a-uuid')).resolves.toBeUndefined()
    const off = createDynamicClientSource({
      tenant: 'acme',
      config: { ...CONFIG, registration: false, metadataDocuments: true },
      registrations: store,
    })
    await expect(off?.find(ID)).resolves.toBeUndefined()
    expect(store.find).not.toHaveBeenCalled()
  })

  it('sends https client_ids to the metadata documents only while they are on', async () => {
    const client = { clientId: 'https://app.example.com/client.json' } as Client
    const metadataDocuments = { find: vi.fn(() => Promise.resolve(client)) }
    const options = { tenant: 'acme', registrations: registrations(), metadataDocuments }
    const on = createDynamicClientSource({
      ...options,
      config: { ...CONFIG, metadataDocuments: true },
    })
    await expect(on?.find(client.clientId)).resolves.toBe(client)
    const off = createDynamicClientSource({ ...options, config: CONFIG })
    await expect(off?.find(client.clientId)).resolves.toBeUndefined()
    expect(metadataDocuments.find).toHaveBeenCalledTimes(1)
  })
})
