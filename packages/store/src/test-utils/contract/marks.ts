import { describe, expect, it } from 'vitest'
import { day, freshStoreEach, hour, minute, storeError, t0, type OpenStore } from './fixtures.js'

/** The MarkStore port: marks set once until they expire. */
export function marksContract(open: OpenStore): void {
  describe('marks', () => {
    const store = freshStoreEach(open)

    const until = t0 + 10 * minute

    it('sets a mark once: true, then false while it lasts', async () => {
      expect(await store().marks.isMarked('acme', 'login-form', 'form-1', t0)).toBe(false)
      expect(await store().marks.mark('acme', 'login-form', 'form-1', until, t0)).toBe(true)
      expect(await store().marks.mark('acme', 'login-form', 'form-1', until, t0 + 1)).toBe(false)
      expect(await store().marks.isMarked('acme', 'login-form', 'form-1', t0)).toBe(true)
      expect(await store().marks.isMarked('acme', 'login-form', 'form-1', until - 1)).toBe(true)
    })

    it('counts a mark as unset from its expiresAt on, and sets it again then', async () => {
      await store().marks.mark('acme', 'jti', 'j-1', until, t0)
      expect(await store().marks.isMarked('acme', 'jti', 'j-1', until)).toBe(false)
      expect(await store().marks.mark('acme', 'jti', 'j-1', until + hour, until)).toBe(true)
      expect(await store().marks.isMarked('acme', 'jti', 'j-1', until + hour - 1)).toBe(true)
      expect(await store().marks.mark('acme', 'jti', 'j-1', until + day, until + 1)).toBe(false)
      expect(await store().marks.isMarked('acme', 'jti', 'j-1', until + hour)).toBe(false)
    })

    it('keeps the first expiry when a live mark is set again', async () => {
      await store().marks.mark('acme', 'revoked', 'j-1', until, t0)
      expect(await store().marks.mark('acme', 'revoked', 'j-1', until + day, t0 + 1)).toBe(false)
      expect(await store().marks.isMarked('acme', 'revoked', 'j-1', until)).toBe(false)
    })

    it('keeps tenants and kinds apart', async () => {
      expect(await store().marks.mark('acme', 'jti', 'x', until, t0)).toBe(true)
      expect(await store().marks.isMarked('globex', 'jti', 'x', t0)).toBe(false)
      expect(await store().marks.isMarked('acme', 'revoked', 'x', t0)).toBe(false)
      expect(await store().marks.mark('globex', 'jti', 'x', until, t0)).toBe(true)
      expect(await store().marks.mark('acme', 'revoked', 'x', until, t0)).toBe(true)
      expect(await store().marks.mark('acme', 'jti', 'x', until, t0)).toBe(false)
    })

    it('keeps ids byte for byte, NUL and case included', async () => {
      const ids = [
        'a',
        'a\u0000',
        'a\u0000b',
        'A',
        'e\u0301',
        '\u00e9',
        '\u{1F600}',
        ' a',
        'x'.repeat(512),
      ]
      for (const id of ids)
        expect(await store().marks.mark('acme', 'jti', id, until, t0)).toBe(true)
      for (const id of ids) expect(await store().marks.isMarked('acme', 'jti', id, t0)).toBe(true)
      for (const id of ids)
        expect(await store().marks.mark('acme', 'jti', id, until, t0)).toBe(false)
      expect(await store().marks.isMarked('acme', 'jti', 'a\u0000c', t0)).toBe(false)
    })

    it('answers true to exactly one of 20 concurrent marks of one id', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => store().marks.mark('acme', 'jti', 'race', until, t0)),
      )
      expect(answers.filter(Boolean)).toHaveLength(1)
    })

    it('answers true to exactly one of 20 concurrent marks of an expired one', async () => {
      await store().marks.mark('acme', 'jti', 'race', until, t0)
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store().marks.mark('acme', 'jti', 'race', until + day, until + i),
        ),
      )
      expect(answers.filter(Boolean)).toHaveLength(1)
    })

    it.each([
      ['an empty kind', '', 'id', until, t0],
      ['a kind of 33 characters', 'k'.repeat(33), 'id', until, t0],
      ['a kind with U+0000', 'j\u0000ti', 'id', until, t0],
      ['an empty id', 'jti', '', until, t0],
      ['an id of 513 characters', 'jti', 'x'.repeat(513), until, t0],
      ['an id with a lone surrogate', 'jti', 'x\ud800', until, t0],
      ['a NaN now', 'jti', 'id', until, Number.NaN],
    ])('refuses %s with a TypeError, setting nothing', async (_, kind, id, expiresAt, now) => {
      await expect(store().marks.mark('acme', kind, id, expiresAt, now)).rejects.toThrow(TypeError)
      await expect(store().marks.isMarked('acme', kind, id, now)).rejects.toThrow(TypeError)
      expect(await store().marks.mark('acme', 'jti', 'id', until, t0)).toBe(true)
    })

    it('refuses an expiresAt that is not integer epoch milliseconds, setting nothing', async () => {
      for (const expiresAt of [until + 0.5, Number.POSITIVE_INFINITY, Number.NaN]) {
        await expect(store().marks.mark('acme', 'jti', 'id', expiresAt, t0)).rejects.toThrow(
          TypeError,
        )
      }
      expect(await store().marks.isMarked('acme', 'jti', 'id', t0)).toBe(false)
    })

    it('is purged once expired, and counted', async () => {
      await store().marks.mark('acme', 'jti', 'old', until, t0)
      await store().marks.mark('acme', 'jti', 'live', until + 1, t0)
      expect(await store().expiry.purgeExpired(until)).toBe(1)
      expect(await store().expiry.purgeExpired(until)).toBe(0)
      expect(await store().marks.isMarked('acme', 'jti', 'live', until)).toBe(true)
      expect(await store().marks.mark('acme', 'jti', 'old', until + day, until)).toBe(true)
    })

    it('refuses any use after close', async () => {
      await store().close()
      for (const use of [
        () => store().marks.mark('acme', 'jti', 'x', until, t0),
        () => store().marks.isMarked('acme', 'jti', 'x', t0),
        () => store().secrets.getOrCreateSecret('login-form-key', 'candidate'),
      ]) {
        expect((await storeError(use())).code).toBe('ERR_STORE_CLOSED')
      }
    })
  })
}
