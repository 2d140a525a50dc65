import { describe, expect, it } from 'vitest'
import { KeyError } from '../errors.js'
import { createKeyCipher, isSealed } from './key-cipher.js'

const SECRET = 'k'.repeat(16) + '-encryption-secret-0123'
const JWK = JSON.stringify({ kty: 'RSA', n: 'bW9kdWx1cw', e: 'AQAB', d: 'c2VjcmV0' })

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(KeyError)
    return (error as KeyError).code
  }
  return undefined
}

describe('key cipher (AES-256-GCM envelopes)', () => {
  it('seals to enc:v1:<salt>.<iv>.<ciphertext>.<tag> and opens back', () => {
    const cipher = createKeyCipher(SECRET)
    const sealed = cipher.seal(JWK, 'acme', '2025-03-10')
    expect(cipher.encrypts).toBe(true)
    expect(sealed).toMatch(/^enc:v1:[\w-]{22}\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/)
    expect(sealed).not.toContain('c2VjcmV0')
    expect(isSealed(sealed)).toBe(true)
    expect(cipher.open(sealed, 'acme', '2025-03-10')).toBe(JWK)
    expect(createKeyCipher(SECRET).open(sealed, 'acme', '2025-03-10')).toBe(JWK)
  })

  it('uses a fresh salt and IV for every envelope', () => {
    const cipher = createKeyCipher(SECRET)
    const a = cipher.seal(JWK, 'acme', '2025-03-10')
    const b = cipher.seal(JWK, 'acme', '2025-03-10')
    expect(a).not.toBe(b)
    const [saltA, ivA] = a.slice('enc:v1:'.length).split('.')
    const [saltB, ivB] = b.slice('enc:v1:'.length).split('.')
    expect(saltA).not.toBe(saltB)
    expect(ivA).not.toBe(ivB)
  })

  it('binds an envelope to its tenant and kid (additional authenticated data)', () => {
    const cipher = createKeyCipher(SECRET)
    const sealed = cipher.seal(JWK, 'acme', '2025-03-10')
    expect(codeOf(() => cipher.open(sealed, 'acme', '2025-03-10.2'))).toBe('ERR_KEY_DECRYPT')
    expect(codeOf(() => cipher.open(sealed, 'globex', '2025-03-10'))).toBe('ERR_KEY_DECRYPT')
  })

  it('refuses a wrong secret with ERR_KEY_DECRYPT naming the tenant, never the secret', () => {
    const sealed = createKeyCipher(SECRET).seal(JWK, 'acme', '2025-03-10')
    const other = 'another-secret-'.padEnd(40, 'x')
    let error: unknown
    try {
      createKeyCipher(other).open(sealed, 'acme', '2025-03-10')
    } catch (caught) {
      error = caught
    }
    expect(error).toMatchObject({ code: 'ERR_KEY_DECRYPT' })
    const message = (error as Error).message
    expect(message).toContain(
      'KEY_ENCRYPTION_SECRET does not decrypt the stored keys of tenant "acme"',
    )
    expect(message).not.toContain(other)
    expect(message).not.toContain(SECRET)
  })

  it('refuses a tampered ciphertext or tag', () => {
    const cipher = createKeyCipher(SECRET)
    const sealed = cipher.seal(JWK, 'acme', '2025-03-10')
    const parts = sealed.slice('enc:v1:'.length).split('.')
    const flip = (text: string): string => {
      const bytes = Buffer.from(text, 'base64url')
      bytes[0] = (bytes[0] ?? 0) ^ 1
      return bytes.toString('base64url')
    }
    const tampered = (index: number): string =>
      'enc:v1:' + parts.map((part, i) => (i === index ? flip(part) : part)).join('.')
    for (const index of [0, 1, 2, 3]) {
      expect(codeOf(() => cipher.open(tampered(index), 'acme', '2025-03-10'))).toBe(
        'ERR_KEY_DECRYPT',
      )
    }
  })

  it('reads plaintext JWKs stored before a secret was set', () => {
    expect(isSealed(JWK)).toBe(false)
    expect(createKeyCipher(SECRET).open(JWK, 'acme', '2025-03-10')).toBe(JWK)
  })

  it('without a secret stores plaintext and refuses envelopes', () => {
    const none = createKeyCipher(undefined)
    expect(none.encrypts).toBe(false)
    expect(none.seal(JWK, 'acme', '2025-03-10')).toBe(JWK)
    const sealed = createKeyCipher(SECRET).seal(JWK, 'acme', '2025-03-10')
    expect(() => none.open(sealed, 'acme', '2025-03-10')).toThrow(
      /stored keys of tenant "acme" are encrypted.*set KEY_ENCRYPTION_SECRET/,
    )
  })

  it('refuses malformed envelopes and unknown versions as ERR_KEY_INVALID', () => {
    const cipher = createKeyCipher(SECRET)
    for (const bad of [
      'enc:v2:abc',
      'enc:v1:',
      'enc:v1:a.b.c',
      'enc:v1:a.b.c.d',
      'enc:v1:!.!.!.!',
    ]) {
      expect(codeOf(() => cipher.open(bad, 'acme', '2025-03-10'))).toBe('ERR_KEY_INVALID')
    }
  })

  it('refuses a secret shorter than 32 characters', () => {
    expect(codeOf(() => createKeyCipher('x'.repeat(31)))).toBe('ERR_SECRET_TOO_SHORT')
  })
})
