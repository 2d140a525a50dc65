import { describe, expect, it } from 'vitest'
import { freshStoreEach, type OpenStore } from './fixtures.js'

/** The SecretStore port: one value per name, the first offered. */
export function secretsContract(open: OpenStore): void {
  describe('secrets', () => {
    const store = freshStoreEach(open)

    it('stores the first candidate and answers it to every later caller', async () => {
      expect(await store().secrets.getOrCreateSecret('login-form-key', 'first')).toBe('first')
      expect(await store().secrets.getOrCreateSecret('login-form-key', 'second')).toBe('first')
      expect(await store().secrets.getOrCreateSecret('other-key', 'second')).toBe('second')
      expect(await store().secrets.getOrCreateSecret('login-form-key', 'third')).toBe('first')
    })

    it('answers one value to 20 concurrent callers with different candidates', async () => {
      const values = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store().secrets.getOrCreateSecret('login-form-key', `candidate-${i}`),
        ),
      )
      expect(new Set(values).size).toBe(1)
      expect(values[0]).toMatch(/^candidate-\d+$/)
    })

    it.each([
      ['an empty name', '', 'value'],
      ['an empty candidate', 'name', ''],
      ['a NUL in the name', 'a\u0000b', 'value'],
      ['a NUL in the candidate', 'name', 'a\u0000b'],
      ['a lone surrogate', 'name', 'x\udc00'],
    ])('refuses %s with a TypeError, storing nothing', async (_, name, candidate) => {
      await expect(store().secrets.getOrCreateSecret(name, candidate)).rejects.toThrow(TypeError)
      expect(await store().secrets.getOrCreateSecret('name', 'kept')).toBe('kept')
    })
  })
}
