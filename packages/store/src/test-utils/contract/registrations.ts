import type { RegisteredClientRecord } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import {
  consentRecord,
  day,
  freshStoreEach,
  registeredClient,
  sha256,
  storeError,
  t0,
  type OpenStore,
} from './fixtures.js'

/** The ClientRegistrationStore port: registered clients, bounded per tenant. */
export function registrationsContract(open: OpenStore): void {
  describe('client registrations', () => {
    const store = freshStoreEach(open)
    const registrations = () => store().clientRegistrations

    /** A client of acme numbered `i`. */
    const nth = (i: number, fields: Partial<RegisteredClientRecord> = {}) =>
      registeredClient({ clientId: `client-${i}`, ...fields })

    it('registers a client and finds it with every field intact', async () => {
      const client = registeredClient()
      expect(await registrations().registerClient(client, 10)).toBe(true)
      expect(await registrations().findRegisteredClient('acme', client.clientId)).toStrictEqual(
        client,
      )
      expect(await registrations().findRegisteredClient('acme', 'client-2')).toBeUndefined()
      expect(await registrations().findRegisteredClient('globex', client.clientId)).toBeUndefined()
      // Copies: changing what was given or found changes nothing stored.
      client.metadata.client_name = 'Mallory'
      const found = await registrations().findRegisteredClient('acme', client.clientId)
      if (found) (found.metadata.redirect_uris as string[]).push('https://evil.example/')
      expect(
        (await registrations().findRegisteredClient('acme', client.clientId))?.metadata,
      ).toStrictEqual(registeredClient().metadata)
    })

    it('leaves secretHash out for a public client', async () => {
      const client = registeredClient({ secretHash: undefined })
      delete client.secretHash
      await registrations().registerClient(client, 10)
      const found = await registrations().findRegisteredClient('acme', client.clientId)
      expect(found).toStrictEqual(client)
      expect(found).not.toHaveProperty('secretHash')
    })

    it('keeps metadata as JSON keeps it: nested values, numbers, U+0000 and any Unicode', async () => {
      const metadata = {
        client_name: 'Caf\u00e9 \u{1F600} a\u0000b',
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] },
        default_max_age: 3600,
        require_auth_time: true,
        logo_uri: null,
        contacts: [],
      }
      await registrations().registerClient(registeredClient({ metadata }), 10)
      expect(
        (await registrations().findRegisteredClient('acme', registeredClient().clientId))?.metadata,
      ).toStrictEqual(metadata)
    })

    it('stores exactly max registrations of a tenant, then refuses, storing nothing', async () => {
      for (let i = 0; i < 3; i++) expect(await registrations().registerClient(nth(i), 3)).toBe(true)
      expect(await registrations().registerClient(nth(3), 3)).toBe(false)
      expect(await registrations().findRegisteredClient('acme', 'client-3')).toBeUndefined()
      // Another tenant has a bound of its own.
      expect(await registrations().registerClient(nth(3, { tenant: 'globex' }), 3)).toBe(true)
      // A larger bound makes room; a deletion does too.
      expect(await registrations().registerClient(nth(3), 4)).toBe(true)
      expect(await registrations().registerClient(nth(4), 4)).toBe(false)
      expect(await registrations().deleteRegisteredClient('acme', 'client-0')).toBe(true)
      expect(await registrations().registerClient(nth(4), 4)).toBe(true)
      expect(await registrations().registerClient(nth(5), 1)).toBe(false)
    })

    it('accepts exactly max of 20 concurrent registrations', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => registrations().registerClient(nth(i), 7)),
      )
      expect(answers.filter(Boolean)).toHaveLength(7)
      for (let i = 0; i < 20; i++) {
        const found = await registrations().findRegisteredClient('acme', `client-${i}`)
        expect(found !== undefined).toBe(answers[i])
      }
    })

    it('refuses a client_id taken in the tenant with ERR_STORE_CONFLICT, keeping the first', async () => {
      const first = registeredClient()
      await registrations().registerClient(first, 10)
      const second = registeredClient({ registrationTokenHash: sha256('other'), updatedAt: t0 + 1 })
      const error = await storeError(registrations().registerClient(second, 10))
      expect(error.code).toBe('ERR_STORE_CONFLICT')
      expect(error.message).toBe('the registered client already exists in this tenant')
      expect(await registrations().findRegisteredClient('acme', first.clientId)).toStrictEqual(
        first,
      )
      // The same client_id in another tenant is another client.
      expect(await registrations().registerClient({ ...second, tenant: 'globex' }, 10)).toBe(true)
    })

    it('updates metadata, secret and updatedAt, keeping createdAt and the registration token', async () => {
      const client = registeredClient()
      await registrations().registerClient(client, 10)
      const changed = registeredClient({
        registrationTokenHash: sha256('ignored'),
        createdAt: t0 + 5,
        updatedAt: t0 + day,
        metadata: { client_name: 'Notes 2', redirect_uris: ['https://notes.example/cb2'] },
      })
      delete changed.secretHash
      expect(await registrations().updateRegisteredClient(changed)).toBe(true)
      const found = await registrations().findRegisteredClient('acme', client.clientId)
      expect(found).toStrictEqual({
        tenant: 'acme',
        clientId: client.clientId,
        registrationTokenHash: client.registrationTokenHash,
        metadata: changed.metadata,
        createdAt: t0,
        updatedAt: t0 + day,
      })
      // A secret can be set again.
      const secretHash = sha256('new-secret')
      expect(await registrations().updateRegisteredClient({ ...changed, secretHash })).toBe(true)
      expect(await registrations().findRegisteredClient('acme', client.clientId)).toMatchObject({
        secretHash,
      })
    })

    it('answers false to an update or deletion of a client it does not hold', async () => {
      await registrations().registerClient(registeredClient(), 10)
      const other = registeredClient({ tenant: 'globex', metadata: { client_name: 'x' } })
      expect(await registrations().updateRegisteredClient(other)).toBe(false)
      expect(await registrations().updateRegisteredClient(nth(9))).toBe(false)
      expect(await registrations().deleteRegisteredClient('globex', other.clientId)).toBe(false)
      expect(await registrations().deleteRegisteredClient('acme', 'client-9')).toBe(false)
      expect(await registrations().findRegisteredClient('globex', other.clientId)).toBeUndefined()
      expect(
        await registrations().findRegisteredClient('acme', registeredClient().clientId),
      ).toStrictEqual(registeredClient())
    })

    it('deletes a registration once, leaving its consents to deleteConsents', async () => {
      const client = registeredClient()
      await registrations().registerClient(client, 10)
      await store().consents.saveConsent(consentRecord())
      expect(await registrations().deleteRegisteredClient('acme', client.clientId)).toBe(true)
      expect(await registrations().deleteRegisteredClient('acme', client.clientId)).toBe(false)
      expect(await registrations().findRegisteredClient('acme', client.clientId)).toBeUndefined()
      expect(
        await store().consents.findConsent(
          'acme',
          'alice',
          client.clientId,
          consentRecord().resources,
          t0,
        ),
      ).toStrictEqual(consentRecord())
    })

    it('is never purged: a registration lives until deleted', async () => {
      await registrations().registerClient(registeredClient(), 10)
      expect(await store().expiry.purgeExpired(t0 + 3650 * day)).toBe(0)
      expect(
        await registrations().findRegisteredClient('acme', registeredClient().clientId),
      ).toBeDefined()
    })

    const bad: [string, Partial<RegisteredClientRecord>][] = [
      ['an empty tenant', { tenant: '' }],
      ['an empty clientId', { clientId: '' }],
      ['a clientId with U+0000', { clientId: 'a\u0000b' }],
      ['a clientId with a lone surrogate', { clientId: 'a\ud800' }],
      ['a clientId of 2049 characters', { clientId: 'x'.repeat(2049) }],
      ['a secretHash that is not SHA-256 hex', { secretHash: 'client-secret' }],
      ['an upper-case secretHash', { secretHash: sha256('s').toUpperCase() }],
      ['a registrationTokenHash that is not SHA-256 hex', { registrationTokenHash: 'token' }],
      ['metadata that is an array', { metadata: [] as unknown as Record<string, unknown> }],
      ['metadata that is not JSON', { metadata: { n: 1n } }],
      ['metadata of more than 64 KiB', { metadata: { client_name: 'x'.repeat(65_536) } }],
      ['a createdAt that is not an integer', { createdAt: t0 + 0.5 }],
      ['a NaN updatedAt', { updatedAt: Number.NaN }],
    ]
    it.each(bad)('refuses %s with a TypeError, storing nothing', async (_, fields) => {
      const record = registeredClient(fields)
      await expect(registrations().registerClient(record, 10)).rejects.toThrow(TypeError)
      await registrations().registerClient(registeredClient(), 10)
      await expect(registrations().updateRegisteredClient(record)).rejects.toThrow(TypeError)
      expect(
        await registrations().findRegisteredClient('acme', registeredClient().clientId),
      ).toStrictEqual(registeredClient())
    })

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
      'refuses a max of %s with a TypeError, storing nothing',
      async (max) => {
        await expect(registrations().registerClient(registeredClient(), max)).rejects.toThrow(
          TypeError,
        )
        expect(
          await registrations().findRegisteredClient('acme', registeredClient().clientId),
        ).toBeUndefined()
      },
    )

    it('finds nothing for a client_id no row can hold, and refuses one that is not a string', async () => {
      await registrations().registerClient(registeredClient(), 10)
      for (const clientId of ['', 'a\u0000', 'a\udc00', 'x'.repeat(2049)]) {
        expect(await registrations().findRegisteredClient('acme', clientId)).toBeUndefined()
        expect(await registrations().deleteRegisteredClient('acme', clientId)).toBe(false)
        expect(await registrations().findRegisteredClient('a\u0000', clientId)).toBeUndefined()
      }
      const notAString = 42 as unknown as string
      await expect(registrations().findRegisteredClient('acme', notAString)).rejects.toThrow(
        TypeError,
      )
      await expect(registrations().deleteRegisteredClient(notAString, 'x')).rejects.toThrow(
        TypeError,
      )
    })
  })
}
