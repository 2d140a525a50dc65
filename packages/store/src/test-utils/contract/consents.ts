import type { ConsentRecord } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import { consentRecord, day, freshStoreEach, t0, type OpenStore } from './fixtures.js'

/** The ConsentStore port: remembered consents, replaced by key, until they expire. */
export function consentsContract(open: OpenStore): void {
  describe('consents', () => {
    const store = freshStoreEach(open)
    const consents = () => store().consents

    /** The consent of `c`'s key, at `now`. */
    const find = (c: ConsentRecord, now = t0) =>
      consents().findConsent(c.tenant, c.subject, c.clientId, c.resources, now)

    it('saves a consent and finds it by its key with every field intact', async () => {
      const consent = consentRecord()
      await consents().saveConsent(consent)
      expect(await find(consent)).toStrictEqual(consent)
      // Copies: changing what was given or found changes nothing stored.
      consent.scopes.push('admin')
      const found = await find(consent)
      found?.scopes.push('root')
      expect(await find(consentRecord())).toStrictEqual(consentRecord())
    })

    it('keeps consents of other tenants, subjects, clients and resources apart', async () => {
      const consent = consentRecord()
      await consents().saveConsent(consent)
      const others = [
        consentRecord({ tenant: 'globex' }),
        consentRecord({ subject: 'bob' }),
        consentRecord({ subject: 'Alice' }),
        consentRecord({ clientId: 'https://app.example/client.json' }),
        consentRecord({ resources: '' }),
        consentRecord({ resources: 'https://a.example/ https://mcp.acme.test/mcp' }),
      ]
      for (const other of others) expect(await find(other)).toBeUndefined()
      for (const [i, other] of others.entries()) {
        await consents().saveConsent({ ...other, scopes: [`s${i}`] })
      }
      expect(await find(consent)).toStrictEqual(consent)
      for (const [i, other] of others.entries()) {
        expect(await find(other)).toStrictEqual({ ...other, scopes: [`s${i}`] })
      }
    })

    it('replaces the scopes and expiry of an earlier consent of the same key', async () => {
      await consents().saveConsent(consentRecord())
      const later = consentRecord({ scopes: ['tools:read'], expiresAt: t0 + 60 * day })
      await consents().saveConsent(later)
      expect(await find(later, t0 + 45 * day)).toStrictEqual(later)
      // A shorter expiry replaces a longer one too.
      const shorter = consentRecord({ scopes: [], expiresAt: t0 + day })
      await consents().saveConsent(shorter)
      expect(await find(shorter)).toStrictEqual(shorter)
      expect(await find(shorter, t0 + day)).toBeUndefined()
    })

    it('finds a consent until its expiresAt, and purges it from then on, counted', async () => {
      const consent = consentRecord()
      const live = consentRecord({ subject: 'bob', expiresAt: consent.expiresAt + 1 })
      await consents().saveConsent(consent)
      await consents().saveConsent(live)
      expect(await find(consent, consent.expiresAt - 1)).toStrictEqual(consent)
      expect(await find(consent, consent.expiresAt)).toBeUndefined()
      expect(await store().expiry.purgeExpired(consent.expiresAt)).toBe(1)
      expect(await store().expiry.purgeExpired(consent.expiresAt)).toBe(0)
      expect(await find(consent, t0)).toBeUndefined()
      expect(await find(live, consent.expiresAt)).toStrictEqual(live)
    })

    it('deletes every consent to a client of one tenant, and no other', async () => {
      const kept = [
        consentRecord({ tenant: 'globex' }),
        consentRecord({ clientId: 'other-client' }),
      ]
      const deleted = [
        consentRecord(),
        consentRecord({ subject: 'bob' }),
        consentRecord({ resources: '' }),
        consentRecord({ expiresAt: t0 - 1 }),
      ]
      for (const consent of [...kept, ...deleted]) await consents().saveConsent(consent)
      await consents().deleteConsents('acme', consentRecord().clientId)
      for (const consent of deleted) expect(await find(consent, t0 - 2)).toBeUndefined()
      for (const consent of kept) expect(await find(consent)).toStrictEqual(consent)
      await expect(consents().deleteConsents('acme', 'no-such-client')).resolves.toBeUndefined()
    })

    const bad: [string, Partial<ConsentRecord>][] = [
      ['an empty tenant', { tenant: '' }],
      ['an empty subject', { subject: '' }],
      ['a subject with U+0000', { subject: 'al\u0000ice' }],
      ['a clientId with a lone surrogate', { clientId: '\ud800' }],
      ['a clientId of 2049 characters', { clientId: 'x'.repeat(2049) }],
      ['resources with U+0000', { resources: 'https://a.example/\u0000' }],
      ['resources that are not a string', { resources: ['x'] as unknown as string }],
      ['a scope with a space', { scopes: ['tools:read tools:call'] }],
      ['an empty scope', { scopes: [''] }],
      ['scopes that are not an array', { scopes: 'tools:read' as unknown as string[] }],
      ['an expiresAt that is not an integer', { expiresAt: t0 + 0.5 }],
    ]
    it.each(bad)('refuses %s with a TypeError, saving nothing', async (_, fields) => {
      await expect(consents().saveConsent(consentRecord(fields))).rejects.toThrow(TypeError)
      expect(await find(consentRecord())).toBeUndefined()
    })

    it('finds nothing for keys no row can hold, and refuses a lookup that is malformed', async () => {
      await consents().saveConsent(consentRecord({ resources: '' }))
      const { clientId } = consentRecord()
      for (const subject of ['', 'alice\u0000', 'alice\ud800']) {
        expect(await consents().findConsent('acme', subject, clientId, '', t0)).toBeUndefined()
      }
      await consents().deleteConsents('acme', `${clientId}\u0000`)
      expect(await consents().findConsent('acme', 'alice', clientId, '', t0)).toBeDefined()
      await expect(
        consents().findConsent('acme', 'alice', clientId, '', Number.NaN),
      ).rejects.toThrow(TypeError)
      await expect(
        consents().findConsent('acme', 'alice', 7 as unknown as string, '', t0),
      ).rejects.toThrow(TypeError)
    })
  })
}
