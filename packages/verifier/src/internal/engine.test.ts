import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { createVerifier } from '../verifier.js'
import type { Verifier } from '../verifier.js'
import { engineOf } from './engine.js'
import type { Engine } from './engine.js'
import { compactSegments } from './token.js'

const SECRET = 'e'.repeat(32)
const ISSUER = 'https://issuer.test'

async function hs256(claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ sub: 'u', scope: 'read', ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(SECRET))
}

function engineFor(verifier: Verifier): Engine {
  const engine = engineOf(verifier)
  if (engine === undefined) throw new Error('createVerifier made a verifier without an engine')
  return engine
}

describe('the engine behind createVerifier', () => {
  it('stays out of the public face: keys, JSON and wrappers', () => {
    const verifier = createVerifier({ issuer: ISSUER, secret: SECRET })
    expect(Object.keys(verifier).sort()).toEqual(['issuers', 'stats', 'verify'])
    expect(JSON.parse(JSON.stringify(verifier))).toEqual({ issuers: [ISSUER] })
    expect(engineOf(verifier)).toBeDefined()
    const wrapped: Verifier = {
      issuers: verifier.issuers,
      stats: () => verifier.stats(),
      verify: (token) => verifier.verify(token),
    }
    expect(engineOf(wrapped)).toBeUndefined()
  })

  it('gives a cache key only to a string it would verify, and only with a token cache', async () => {
    const token = await hs256()
    const cached = engineFor(
      createVerifier({
        issuer: ISSUER,
        secret: SECRET,
        tokenCache: { max: 10 },
        maxTokenLength: 400,
      }),
    )
    expect(cached.cacheKeyOf(token)).toMatch(/^[\w-]{43}$/)
    expect(cached.cacheKeyOf('a'.repeat(401))).toBeUndefined()
    expect(cached.cacheKeyOf(42 as unknown as string)).toBeUndefined()
    expect(engineFor(createVerifier({ issuer: ISSUER, secret: SECRET })).cacheKeyOf(token)).toBe(
      undefined,
    )
  })

  it('verifies with or without the segments, and caches under the key it is given', async () => {
    const token = await hs256()
    const verifier = createVerifier({ issuer: ISSUER, secret: SECRET, tokenCache: { max: 10 } })
    const engine = engineFor(verifier)
    const cacheKey = engine.cacheKeyOf(token) as string
    expect(engine.cachedResult(cacheKey)).toBeUndefined()
    const split = await engine.verifyUncached(token, undefined, compactSegments(token))
    const unsplit = await engine.verifyUncached(token, cacheKey, undefined)
    expect(split).toEqual(unsplit)
    expect(split.payload.sub).toBe('u')
    expect(engine.cachedResult(cacheKey)).toEqual(unsplit)
    expect(await verifier.verify(token)).toBe(engine.cachedResult(cacheKey))
    expect(verifier.stats()).toMatchObject({ tokenCacheHits: 3, accepted: { HS256: 5 } })
  })

  it('refuses a token whose segments are not given, by its shape', async () => {
    const verifier = createVerifier({ issuer: ISSUER, secret: SECRET })
    const engine = engineFor(verifier)
    await expect(engine.verifyUncached('abc', undefined, undefined)).rejects.toMatchObject({
      code: 'ERR_TOKEN_MALFORMED',
    })
    expect(verifier.stats().rejected).toEqual({ ERR_TOKEN_MALFORMED: 1 })
  })

  it('reports a clock that throws on a cache lookup once, as a refusal, never synchronously', async () => {
    const token = await hs256()
    let broken = false
    const verifier = createVerifier({
      issuer: ISSUER,
      secret: SECRET,
      tokenCache: { max: 10 },
      now: () => {
        if (broken) throw new Error('no clock')
        return Date.now()
      },
    })
    await verifier.verify(token)
    broken = true
    const engine = engineFor(verifier)
    expect(engine.cachedResult(engine.cacheKeyOf(token) as string)).toBeUndefined()
    const pending = verifier.verify(token)
    await expect(pending).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' })
    expect(verifier.stats().rejected).toEqual({ ERR_TOKEN_INVALID: 1 })
  })
})
