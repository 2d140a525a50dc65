import type { Tenant } from '@tessera/config-schema'
import { generateRsaKey } from '@tessera/keys'
import type { KeyStore } from '@tessera/keys'
import { createMemoryStore } from '@tessera/store'
import { describe, expect, it } from 'vitest'
import { createTenantRuntimes, issuerUrl } from './runtime.js'
import type { TenantRuntimeOptions } from './runtime.js'

const tenant = (host: string): Tenant => ({ hosts: [host, 'other.test'] }) as unknown as Tenant

describe('issuerUrl', () => {
  it('start: the scheme and the first host exactly as written', () => {
    expect(issuerUrl(tenant('auth.acme.example'), 'https')).toBe('https://auth.acme.example')
    expect(issuerUrl(tenant('acme.localhost:3000'), 'https')).toBe('https://acme.localhost:3000')
  })

  it('dev: a first host without a port takes the listening port', () => {
    expect(issuerUrl(tenant('acme.localhost'), 'http', 3100)).toBe('http://acme.localhost:3100')
    expect(issuerUrl(tenant('127.0.0.1'), 'http', 3100)).toBe('http://127.0.0.1:3100')
    expect(issuerUrl(tenant('[::1]'), 'http', 3100)).toBe('http://[::1]:3100')
    expect(issuerUrl(tenant('::1'), 'http', 3100)).toBe('http://[::1]:3100')
  })

  it('dev: a first host that names its port keeps it', () => {
    expect(issuerUrl(tenant('acme.localhost:3000'), 'http', 3100)).toBe(
      'http://acme.localhost:3000',
    )
    expect(issuerUrl(tenant('[::1]:8443'), 'http', 3100)).toBe('http://[::1]:8443')
  })
})

describe('createTenantRuntimes', () => {
  const KEY_SECRET = 'key-encryption-secret-0123456789-abcdef'
  const many = (count: number): Tenant[] =>
    Array.from({ length: count }, (_, index) => ({
      name: `t${index}`,
      hosts: [`t${index}.test`],
      jwtAlgorithm: index % 2 === 0 ? 'HS256' : 'RS256',
      providers: [],
      clients: [],
      source: { file: 'x.yaml', line: 1 },
    }))
  const options = (keyStore: KeyStore): TenantRuntimeOptions => ({
    scheme: 'https',
    jwtSecret: 'jwt-secret-0123456789-abcdefghijklmnop',
    accessTokenTtlSeconds: 3600,
    keyStore,
    now: Date.now,
    keyRotateOnRestart: false,
    keyRotationMs: 90 * 86_400_000,
    jwksGraceMs: 4 * 3_600_000,
    keyEncryptionSecret: KEY_SECRET,
    users: () => ({ authenticate: () => Promise.resolve(undefined) }) as never,
  })
  /** A key store counting the names each listKeysOfTenants call asks for. */
  const counted = (): { store: KeyStore; batches: number[] } => {
    const store = createMemoryStore().keys
    const batches: number[] = []
    const list = store.listKeysOfTenants.bind(store)
    store.listKeysOfTenants = (names) => {
      batches.push(names.length)
      return list(names)
    }
    return { store, batches }
  }

  it('reads the keys of 1,100 tenants in batches, twice, and makes each context once, when asked', async () => {
    const { store, batches } = counted()
    const runtimes = await createTenantRuntimes(many(1_100), options(store))
    expect(runtimes).toHaveLength(1_100)
    expect(batches).toEqual([500, 500, 100, 500, 500, 100])
    const runtime = runtimes[1]
    expect(runtime?.issuer).toBe('https://t1.test')
    const context = runtime?.context
    expect(context?.name).toBe('t1')
    expect(runtime?.context).toBe(context)
    expect(runtime?.corsOrigins).toBe(runtime?.corsOrigins)
  })

  it('checks every batch before any ring loads: a key that does not open stops it, nothing written', async () => {
    const { store } = counted()
    const key = await generateRsaKey('t1', '2025-01-01', Date.UTC(2025, 0, 1))
    // A plaintext key in the first batch: a ring's load would seal it.
    await store.insertKeyIfAbsent(key)
    // An envelope that does not open, in the last batch.
    await store.insertKeyIfAbsent({ ...key, tenant: 't1099', privateKey: 'enc:v1:a.b.c.d' })
    await expect(createTenantRuntimes(many(1_100), options(store))).rejects.toMatchObject({
      code: 'ERR_KEY_INVALID',
      message: expect.stringContaining('t1099') as string,
    })
    const [first] = await store.listKeys('t1')
    expect(first?.privateKey).toBe(key.privateKey)
  })
})
