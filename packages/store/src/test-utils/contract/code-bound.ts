import { describe, expect, it } from 'vitest'
import { StoreError } from '../../errors.js'
import { codeRecord, freshStoreEach, sha256, t0, type OpenStore } from './fixtures.js'

const second = 1000

/** A code of session `sid` and client `clientId`, issued `i` seconds after t0. */
function sessionCode(i: number, fields: { sid?: string; clientId?: string; tenant?: string } = {}) {
  const { sid = 'sid-1', clientId = 'web', tenant = 'acme' } = fields
  return codeRecord({
    codeHash: sha256(`${tenant}/${sid}/${clientId}/${i}`),
    tenant,
    clientId,
    sid,
    authTime: t0,
    createdAt: t0 + i * second,
    expiresAt: t0 + i * second + 60 * second,
  })
}

/**
 * `saveCode` with `keepPerSession`: requests riding a live sign-in session cannot grow the
 * codes table.
 */
export function codeBoundContract(open: OpenStore): void {
  describe('authorization codes bounded per session and client', () => {
    const store = freshStoreEach(open)
    const found = async (code: { tenant: string; codeHash: string }) =>
      (await store().codes.findCode(code.tenant, code.codeHash)) !== undefined

    it('keeps the newest keepPerSession unconsumed codes of a session and client', async () => {
      const codes = Array.from({ length: 6 }, (_, i) => sessionCode(i))
      for (const code of codes) await store().codes.saveCode(code, { keepPerSession: 3 })
      expect(await Promise.all(codes.map(found))).toEqual([false, false, false, true, true, true])
    })

    it('keeps the saved code even when an older clock wrote it', async () => {
      for (const i of [10, 11]) await store().codes.saveCode(sessionCode(i), { keepPerSession: 2 })
      const late = sessionCode(5)
      await store().codes.saveCode(late, { keepPerSession: 2 })
      expect(await found(late)).toBe(true)
      expect(await found(sessionCode(11))).toBe(true)
      expect(await found(sessionCode(10))).toBe(false)
    })

    it('counts and deletes neither consumed codes nor those of other sessions, clients, tenants', async () => {
      const redeemed = sessionCode(0)
      await store().codes.saveCode(redeemed, { keepPerSession: 1 })
      expect(
        await store().codes.redeemCode('acme', redeemed.codeHash, t0 + second, undefined),
      ).toBe(true)
      const others = [
        sessionCode(1, { sid: 'sid-2' }),
        sessionCode(2, { clientId: 'mobile' }),
        sessionCode(3, { tenant: 'globex' }),
        codeRecord({ codeHash: sha256('no-sid'), createdAt: t0 + 4 * second }),
        sessionCode(5),
      ]
      for (const code of others) await store().codes.saveCode(code, { keepPerSession: 1 })
      // Saved without options: the bound applies only when asked.
      await store().codes.saveCode(sessionCode(6))
      const last = sessionCode(7)
      await store().codes.saveCode(last, { keepPerSession: 1 })
      expect(await Promise.all([redeemed, ...others, sessionCode(6), last].map(found))).toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
        false,
        true,
      ])
    })

    it('refuses a keepPerSession that is not a positive integer, deleting nothing', async () => {
      const first = sessionCode(0)
      await store().codes.saveCode(first)
      for (const keep of [0, -1, 1.5, Number.NaN]) {
        await expect(
          store().codes.saveCode(sessionCode(1), { keepPerSession: keep }),
        ).rejects.toThrow(TypeError)
      }
      expect(await found(first)).toBe(true)
      expect(await found(sessionCode(1))).toBe(false)
    })

    it('deletes nothing when the saved code conflicts with a stored one', async () => {
      const kept = sessionCode(0)
      const taken = sessionCode(1)
      await store().codes.saveCode(kept)
      await store().codes.saveCode(taken)
      const error: unknown = await store()
        .codes.saveCode(taken, { keepPerSession: 1 })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect((error as StoreError).code).toBe('ERR_STORE_CONFLICT')
      expect(await found(kept)).toBe(true)
    })
  })
}
