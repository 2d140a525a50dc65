import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { randomToken, sha256, sha256Hex } from './crypto.js'

describe('randomToken', () => {
  it('gives 256-bit base64url tokens, never the same twice, across many refills of its pool', () => {
    const tokens = Array.from({ length: 2_000 }, () => randomToken())
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(new Set(tokens).size).toBe(tokens.length)
    // 256 bits each: no byte value is missing from a sample of 64 000 random bytes.
    const bytes = Buffer.concat(tokens.map((token) => Buffer.from(token, 'base64url')))
    expect(bytes.length).toBe(2_000 * 32)
    expect(new Set(bytes).size).toBe(256)
  })
})

describe('sha256Hex and sha256', () => {
  it('hash the UTF-8 bytes of a string as createHash does', () => {
    for (const text of ['', 'refresh-token', 'é∂🔑', 'a'.repeat(1000)]) {
      const expected = createHash('sha256').update(text, 'utf8').digest()
      expect(sha256Hex(text)).toBe(expected.toString('hex'))
      expect(sha256(text).equals(expected)).toBe(true)
    }
  })
})
