import { describe, expect, it } from 'vitest'
import { decodeToken } from './token.js'

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
