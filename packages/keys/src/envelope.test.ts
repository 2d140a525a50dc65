import { describe, expect, it } from 'vitest'
import { createSealer, EnvelopeError, isEnvelope } from './envelope.js'

const SECRET = 'fixture-key-encryption-secret-0123456789-abcdef'
const JWK = JSON.stringify({ kty: 'RSA', n: 'bW9kdWx1cw', e: 'AQAB', d: 'c2VjcmV0' })
const DIGEST = '3f'.repeat(32)
const DOCUMENTS = JSON.stringify([{ name: 'acme' }])

/** A private key sealed by the key rings' cipher as it is written (`enc:v1:`, salt per key). */
const SEALED_PRIVATE_KEY =
  'enc:v1:RYjFZzRguRLcBkkUwqWlWA.-jEeewxuw0ZxruIt.nHtWHY7cpBdjVNqmo8-joC6Eks-VCQul25Y-pEgynM3s0TmxwCv39ABS87gzvtz4C1YM-hXKjV0.uUg8XBULFH4O5I76mBQr_g'
/** A parse result sealed in the parse cache's first format (`v1.`, one key, the digest as AAD). */
const FIRST_PARSE_CACHE_ENTRY = 'v1.gyyBY2hH8r8AWQDX.9n0Rwbu69U_H7ID7PqNEXOk.MpDYnAiqiITbz2OG_eCHYg'

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeError)
    return (error as EnvelopeError).code
  }
  return undefined
}

describe('AES-256-GCM envelopes', () => {
  it('seals every purpose to enc:v1:<salt>.<iv>.<ciphertext>.<tag> and opens it back', () => {
    for (const purpose of ['private-key', 'parsed-configuration'] as const) {
      const sealed = createSealer(SECRET, purpose).seal(JWK, ['acme', 'kid'])
      expect(sealed).toMatch(/^enc:v1:[\w-]{22}\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/)
      expect(isEnvelope(sealed)).toBe(true)
      expect(createSealer(SECRET, purpose).open(sealed, ['acme', 'kid'])).toBe(JWK)
    }
  })

  it('opens a private key sealed by the key rings', () => {
    expect(
      createSealer(SECRET, 'private-key').open(SEALED_PRIVATE_KEY, ['acme', '2025-03-10']),
    ).toBe(JWK)
  })

  it("opens a parse result sealed in the parse cache's first format, and writes none", () => {
    const sealer = createSealer(SECRET, 'parsed-configuration')
    expect(sealer.open(FIRST_PARSE_CACHE_ENTRY, [DIGEST])).toBe(DOCUMENTS)
    expect(codeOf(() => sealer.open(FIRST_PARSE_CACHE_ENTRY, ['00'.repeat(32)]))).toBe(
      'ERR_ENVELOPE_OPEN',
    )
    expect(
      codeOf(() =>
        createSealer(`${SECRET}x`, 'parsed-configuration').open(FIRST_PARSE_CACHE_ENTRY, [DIGEST]),
      ),
    ).toBe('ERR_ENVELOPE_OPEN')
    // The first format is the parse cache's alone.
    expect(
      codeOf(() => createSealer(SECRET, 'private-key').open(FIRST_PARSE_CACHE_ENTRY, [DIGEST])),
    ).toBe('ERR_ENVELOPE_VERSION')
    expect(sealer.seal(DOCUMENTS, [DIGEST])).toMatch(/^enc:v1:/)
  })

  it('gives each private key a salt of its own, and one sealer of parse results one salt', () => {
    const salt = (sealed: string): string | undefined =>
      sealed.slice('enc:v1:'.length).split('.')[0]
    const iv = (sealed: string): string | undefined => sealed.slice('enc:v1:'.length).split('.')[1]
    const keys = createSealer(SECRET, 'private-key')
    const a = keys.seal(JWK, ['acme', 'k'])
    const b = keys.seal(JWK, ['acme', 'k'])
    expect(salt(a)).not.toBe(salt(b))
    expect(iv(a)).not.toBe(iv(b))
    const parsed = createSealer(SECRET, 'parsed-configuration')
    const c = parsed.seal(DOCUMENTS, [DIGEST])
    const d = parsed.seal(DOCUMENTS, [DIGEST])
    expect(salt(c)).toBe(salt(d))
    expect(iv(c)).not.toBe(iv(d))
    expect(salt(createSealer(SECRET, 'parsed-configuration').seal(DOCUMENTS, [DIGEST]))).not.toBe(
      salt(c),
    )
  })

  it('binds an envelope to its context and its purpose', () => {
    const sealed = createSealer(SECRET, 'private-key').seal(JWK, ['acme', 'k'])
    expect(codeOf(() => createSealer(SECRET, 'private-key').open(sealed, ['acme', 'k2']))).toBe(
      'ERR_ENVELOPE_OPEN',
    )
    expect(codeOf(() => createSealer(SECRET, 'private-key').open(sealed, ['acme', 'k', '']))).toBe(
      'ERR_ENVELOPE_OPEN',
    )
    expect(
      codeOf(() => createSealer(SECRET, 'parsed-configuration').open(sealed, ['acme', 'k'])),
    ).toBe('ERR_ENVELOPE_OPEN')
  })

  it('refuses another secret, malformed envelopes and unknown versions', () => {
    const sealed = createSealer(SECRET, 'parsed-configuration').seal(DOCUMENTS, [DIGEST])
    const other = createSealer(`${SECRET}-other`, 'parsed-configuration')
    expect(codeOf(() => other.open(sealed, [DIGEST]))).toBe('ERR_ENVELOPE_OPEN')
    const sealer = createSealer(SECRET, 'parsed-configuration')
    for (const bad of [
      'enc:v1:',
      'enc:v1:a.b.c',
      'enc:v1:a.b.c.d',
      'enc:v1:!.!.!.!',
      'v1.a.b',
      'v1.!.!.!',
    ]) {
      expect(codeOf(() => sealer.open(bad, [DIGEST]))).toMatch(/ERR_ENVELOPE_(MALFORMED|OPEN)/)
    }
    expect(codeOf(() => sealer.open('enc:v2:abc', [DIGEST]))).toBe('ERR_ENVELOPE_VERSION')
    expect(codeOf(() => sealer.open('{"plain":true}', [DIGEST]))).toBe('ERR_ENVELOPE_VERSION')
  })
})
