import { describe, expect, it } from 'vitest'
import { compactSegments, decodeToken, HeaderCache, splitToken } from './token.js'

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('decodeToken', () => {
  it('decodes header and payload without verifying', () => {
    const token = `${encode({ alg: 'HS256' })}.${encode({ iss: 'x' })}.sig`
    expect(decodeToken(token)).toEqual({ header: { alg: 'HS256' }, payload: { iss: 'x' } })
  })

  it.each([
    ['two segments', `${encode({})}.${encode({})}`],
    ['an empty signature', `${encode({})}.${encode({})}.`],
    ['a non-base64url character', `${encode({})}.${encode({})}.a+b`],
    ['a header that is an array', `${encode([])}.${encode({})}.sig`],
    ['a payload that is a number', `${encode({})}.${encode(1)}.sig`],
    ['a header with jku', `${encode({ alg: 'RS256', jku: 'https://x' })}.${encode({})}.sig`],
    ['a header with crit', `${encode({ alg: 'RS256', crit: [] })}.${encode({})}.sig`],
  ])('refuses %s', (_, token) => {
    expect(() => decodeToken(token)).toThrow(
      expect.objectContaining({ code: 'ERR_TOKEN_MALFORMED' }),
    )
  })
})

describe('HeaderCache', () => {
  it('decodes a header segment once and answers later tokens with the same result', () => {
    const cache = new HeaderCache()
    const segment = encode({ alg: 'RS256', kid: 'k' })
    const first = cache.decode(segment)
    expect(first).toEqual({ alg: 'RS256', kid: 'k' })
    expect(Object.isFrozen(first)).toBe(true)
    expect(cache.decode(`${segment}.x`.slice(0, segment.length))).toBe(first)
  })

  it('refuses what decodeToken refuses, every time', () => {
    const cache = new HeaderCache()
    for (const header of [encode({ alg: 'RS256', jku: 'https://x' }), encode([]), 'bm90LWpzb24']) {
      for (let i = 0; i < 2; i += 1) {
        expect(() => cache.decode(header), header).toThrow(
          expect.objectContaining({ code: 'ERR_TOKEN_MALFORMED' }),
        )
      }
    }
  })
})

describe('splitToken', () => {
  it('splits a compact JWS and refuses anything else', () => {
    expect(splitToken('a.b.c')).toEqual({ protected: 'a', payload: 'b', signature: 'c' })
    expect(() => splitToken('a.b.c=')).toThrow(
      expect.objectContaining({ code: 'ERR_TOKEN_MALFORMED' }),
    )
    expect(compactSegments('a.b.c')).toEqual({ protected: 'a', payload: 'b', signature: 'c' })
    expect(compactSegments('a.b.c=')).toBeUndefined()
    expect(compactSegments('a..c')).toBeUndefined()
    expect(compactSegments('a.b.c.d')).toBeUndefined()
  })
})
