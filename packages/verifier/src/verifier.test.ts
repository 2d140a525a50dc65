import { describe, expect, it } from 'vitest'
import { createVerifier } from './verifier.js'
import type { VerifierOptions } from './options.js'

const SECRET = 'x'.repeat(32)
const ISSUER = 'https://issuer.test'

describe('createVerifier options', () => {
  it('accepts the documented defaults, undefined meaning default', () => {
    const verifier = createVerifier({
      issuer: ISSUER,
      secret: undefined,
      audience: undefined,
      tokenCache: undefined,
    })
    expect(verifier.issuers).toEqual([ISSUER])
  })

  it.each<[string, unknown, RegExp]>([
    ['no issuer', {}, /options\.issuer/],
    [
      'an issuer that is not a URL',
      { issuer: 'acme' },
      /options\.issuer: must be an absolute http\(s\) URL/,
    ],
    ['an empty issuer list', { issuer: [] }, /options\.issuer: must name at least one issuer/],
    [
      'a short secret',
      { issuer: ISSUER, secret: 'short' },
      /options\.secret: must be at least 32 characters/,
    ],
    [
      'HS256 without a secret',
      { issuer: ISSUER, algorithms: ['HS256'] },
      /options\.secret: required when algorithms includes HS256/,
    ],
    [
      'no algorithm',
      { issuer: ISSUER, algorithms: [] },
      /options\.algorithms: must list at least one algorithm/,
    ],
    [
      'an unsupported algorithm',
      { issuer: ISSUER, algorithms: ['RS256', 'none'] },
      /options\.algorithms\.1/,
    ],
    ['a typo', { issuer: ISSUER, audiance: 'x' }, /options\.audiance: not an option/],
    ['a negative cooldown', { issuer: ISSUER, cooldown: -1 }, /options\.cooldown/],
    ['a fractional timeout', { issuer: ISSUER, timeout: 1.5 }, /options\.timeout/],
    ['a tiny maxTokenLength', { issuer: ISSUER, maxTokenLength: 10 }, /options\.maxTokenLength/],
    ['a tokenCache without max', { issuer: ISSUER, tokenCache: {} }, /options\.tokenCache/],
    [
      'a fetch that is not a function',
      { issuer: ISSUER, fetch: 'fetch' },
      /options\.fetch: must be a function/,
    ],
    [
      'one jwksUri for two issuers',
      { issuer: [ISSUER, 'https://b.test'], jwksUri: 'https://k.test/jwks' },
      /options\.jwksUri: must map each issuer/,
    ],
    [
      'a jwksUri for an unknown issuer',
      { issuer: ISSUER, jwksUri: { 'https://b.test': 'https://k.test/jwks' } },
      /options\.jwksUri: names https:\/\/b\.test/,
    ],
    [
      'a jwksUri that is not http(s)',
      { issuer: ISSUER, jwksUri: 'file:///etc/jwks.json' },
      /options\.jwksUri/,
    ],
  ])('refuses %s with a TypeError naming the option', (_, options, message) => {
    expect(() => createVerifier(options as VerifierOptions)).toThrow(TypeError)
    expect(() => createVerifier(options as VerifierOptions)).toThrow(message)
  })

  it('refuses options that are not an object', () => {
    expect(() => createVerifier(null as unknown as VerifierOptions)).toThrow(TypeError)
  })

  it('enables HS256 with a secret, and lets algorithms drop it', async () => {
    const both = createVerifier({ issuer: ISSUER, secret: SECRET })
    const rsOnly = createVerifier({ issuer: ISSUER, secret: SECRET, algorithms: ['RS256'] })
    const hsToken = [
      Buffer.from('{"alg":"HS256"}').toString('base64url'),
      Buffer.from(JSON.stringify({ iss: ISSUER, exp: 1e10 })).toString('base64url'),
      'c2ln',
    ].join('.')
    await expect(both.verify(hsToken)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' })
    await expect(rsOnly.verify(hsToken)).rejects.toMatchObject({ code: 'ERR_ALG_NOT_ALLOWED' })
  })
})
