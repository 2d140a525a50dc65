import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseJwks } from './jwks.js'

function rsaJwk(bits = 2048): Record<string, unknown> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits })
  return { ...publicKey.export({ format: 'jwk' }), d: privateKey.export({ format: 'jwk' }).d }
}

describe('parseJwks', () => {
  const jwk = rsaJwk()

  it('keeps RSA keys and reads only kid, n and e', () => {
    const { keys, ignored } = parseJwks({
      keys: [{ ...jwk, kid: '2026-11-22', use: 'sig', alg: 'RS256' }],
    })
    expect(ignored).toBe(0)
    expect(keys).toEqual([{ kid: '2026-11-22', n: jwk.n, e: jwk.e }])
  })

  it('skips oct, EC, encryption, other-alg, short and malformed-kid keys', () => {
    const { keys, ignored } = parseJwks({
      keys: [
        { kty: 'oct', kid: 'a', k: 'c2VjcmV0' },
        { kty: 'EC', kid: 'b', crv: 'P-256', x: 'x', y: 'y' },
        { ...jwk, kid: 'c', use: 'enc' },
        { ...jwk, kid: 'd', alg: 'RS512' },
        { ...jwk, kid: 'e', key_ops: ['sign'] },
        { ...rsaJwk(1024), kid: 'f' },
        { ...jwk, kid: '../g' },
        { ...jwk, kid: 7 },
        'not an object',
        { ...jwk, kid: 'ok' },
      ],
    })
    expect(keys.map((k) => k.kid)).toEqual(['ok'])
    expect(ignored).toBe(9)
  })

  it('drops every copy of a duplicated kid', () => {
    const { keys, ignored } = parseJwks({
      keys: [
        { ...jwk, kid: 'dup' },
        { ...jwk, kid: 'dup' },
        { ...jwk, kid: 'dup' },
        { ...jwk, kid: 'one' },
      ],
    })
    expect(keys.map((k) => k.kid)).toEqual(['one'])
    expect(ignored).toBe(3)
  })

  it('accepts an empty set and refuses a set with nothing usable', () => {
    expect(parseJwks({ keys: [] })).toEqual({ keys: [], ignored: 0 })
    expect(() => parseJwks({ keys: [{ kty: 'oct', kid: 'a', k: 'AA' }] })).toThrow(/no usable/)
    expect(() => parseJwks({ keys: {} })).toThrow(/not a JWK Set/)
    expect(() => parseJwks([])).toThrow(/not a JWK Set/)
    expect(() => parseJwks(null)).toThrow(/not a JWK Set/)
  })
})
