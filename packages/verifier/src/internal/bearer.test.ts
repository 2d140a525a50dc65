import { describe, expect, it } from 'vitest'
import { VerifierError } from '../errors.js'
import { checkRealm, checkRequiredScopes, checkScopes, extractBearerToken } from './bearer.js'

function codeOf(run: () => unknown): string {
  try {
    run()
    return 'ok'
  } catch (error) {
    return error instanceof VerifierError ? error.code : 'other'
  }
}

describe('extractBearerToken', () => {
  it('returns the token of a Bearer header, scheme in any case', () => {
    expect(extractBearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi')
    expect(extractBearerToken('bearer abc')).toBe('abc')
    expect(extractBearerToken('BEARER   abc~+/==')).toBe('abc~+/==')
  })

  it('treats no header and other schemes as no token', () => {
    for (const header of [
      undefined,
      null,
      '',
      '   ',
      'Basic dXNlcg==',
      'Bearertoken',
      'DPoP abc',
    ]) {
      expect(codeOf(() => extractBearerToken(header))).toBe('ERR_TOKEN_MISSING')
    }
  })

  it('refuses an empty token, extra parts and characters outside b64token', () => {
    for (const header of [
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Bearer a\tb',
      'Bearer a=b',
      'Bearer "a"',
      'Bearer a,b',
    ]) {
      expect(
        codeOf(() => extractBearerToken(header)),
        header,
      ).toBe('ERR_AUTHORIZATION_INVALID')
    }
  })
})

describe('checkScopes', () => {
  const auth = {
    token: 't',
    payload: { iss: 'i', exp: 1 },
    protectedHeader: { alg: 'HS256' as const },
    scopes: ['a', 'b'],
  }

  it('passes when every required scope is present', () => {
    expect(codeOf(() => checkScopes(auth, ['a', 'b']))).toBe('ok')
  })

  it('names all required scopes when one lacks', () => {
    try {
      checkScopes(auth, ['a', 'c'])
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'ERR_INSUFFICIENT_SCOPE', scope: 'a c' })
    }
  })

  it('answers no token when no bearer middleware ran', () => {
    expect(codeOf(() => checkScopes(undefined, ['a']))).toBe('ERR_TOKEN_MISSING')
  })
})

describe('option checks of the adapters', () => {
  it('refuses realms and scopes that could not be quoted', () => {
    expect(() => checkRealm('a"b', 'bearer')).toThrow(/bearer: options.realm/)
    expect(() => checkRealm('', 'bearer')).toThrow(TypeError)
    expect(checkRealm(undefined, 'bearer')).toBe('api')
    expect(() => checkRequiredScopes('', 'requireScope')).toThrow(/requireScope: scope/)
    expect(() => checkRequiredScopes(['a b'], 'requireScope')).toThrow(TypeError)
    expect(() => checkRequiredScopes(['a"'], 'requireScope')).toThrow(TypeError)
    expect(checkRequiredScopes('orders:read  orders:write', 'requireScope')).toEqual([
      'orders:read',
      'orders:write',
    ])
  })
})
