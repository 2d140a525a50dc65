import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, renderError, VerifierError } from '../src/index.js'
import type { Verifier } from '../src/index.js'
import { AUDIENCE, buildAttacks } from './support/attacks.js'
import type { Attack, Valid } from './support/attacks.js'
import { claims, createTestKey, SECRET, signRs256 } from './support/keys.js'
import { startJwksServer } from './support/jwks-server.js'
import type { JwksServer } from './support/jwks-server.js'

const START = Date.UTC(2026, 10, 22, 8)
const clock = { now: START }
let jwks: JwksServer
let attacks: Attack[]
let valid: Valid[]
let withSecret: Verifier
let withoutSecret: Verifier

beforeAll(async () => {
  const key = await createTestKey('2026-11-22')
  jwks = await startJwksServer([key.jwk])
  const common = { issuer: jwks.issuer, audience: AUDIENCE, now: () => clock.now }
  withSecret = createVerifier({ ...common, secret: SECRET })
  withoutSecret = createVerifier(common)
  // Warm the caches, then let the cooldown pass: from here on an unknown kid may refetch, so
  // any fetch below would be one an attack caused.
  const warm = await signRs256(key, claims(jwks.issuer, Math.floor(clock.now / 1000)))
  await withSecret.verify(warm)
  await withoutSecret.verify(warm)
  clock.now += 60_000
  jwks.hits = 0
  ;({ attacks, valid } = await buildAttacks(
    jwks.issuer,
    key,
    Math.floor(clock.now / 1000),
    `${jwks.issuer}/elsewhere`,
  ))
})
afterAll(async () => {
  await jwks.close()
})

async function refusal(verifier: Verifier, token: string, name = ''): Promise<VerifierError> {
  try {
    await verifier.verify(token)
  } catch (error) {
    if (error instanceof VerifierError) return error
    throw error
  }
  throw new Error(`the token was accepted: ${name}`)
}

describe('attack tokens', () => {
  it('builds the whole table', () => {
    expect(attacks.length).toBeGreaterThanOrEqual(50)
  })

  it('refuses each with its code, as 401 invalid_token, without any fetch', async () => {
    for (const attack of attacks) {
      const error = await refusal(withSecret, attack.token, attack.name)
      expect({ name: attack.name, code: error.code }).toEqual({
        name: attack.name,
        code: attack.code,
      })
      const response = renderError(error)
      expect(response.status, attack.name).toBe(401)
      expect(response.headers['www-authenticate'], attack.name).toMatch(
        /^Bearer realm="api", error="invalid_token", error_description="[^"\\]+"$/,
      )
    }
    expect(jwks.hits).toBe(0)
    expect(jwks.otherHits).toBe(0)
  })

  it('refuses each as 401 without a secret too (HS256 then not allowed at all)', async () => {
    for (const attack of attacks) {
      const error = await refusal(withoutSecret, attack.token, attack.name)
      expect(renderError(error).status, attack.name).toBe(401)
      if (attack.name.startsWith('HS256')) expect(error.code).toBe('ERR_ALG_NOT_ALLOWED')
    }
    expect(jwks.hits + jwks.otherHits).toBe(0)
  })

  it('accepts the tolerance edges and an HS256 kid it never looks up', async () => {
    for (const token of valid) {
      await expect(withSecret.verify(token.token), token.name).resolves.toBeDefined()
    }
    expect(jwks.hits).toBe(0)
  })

  it('distinguishes an expired token from an invalid one', async () => {
    const expired = attacks.find((a) => a.name === 'expired beyond the tolerance')!
    const tampered = attacks.find((a) => a.name === 'tampered payload')!
    expect((await refusal(withSecret, expired.token)).code).toBe('ERR_TOKEN_EXPIRED')
    expect((await refusal(withSecret, tampered.token)).code).toBe('ERR_TOKEN_INVALID')
  })

  it('counts refusals per code and reports them without token content', async () => {
    const events: unknown[] = []
    const verifier = createVerifier({
      issuer: jwks.issuer,
      secret: SECRET,
      audience: AUDIENCE,
      now: () => clock.now,
      onEvent: (event) => events.push(event),
    })
    const wrongIss = attacks.find((a) => a.name === 'wrong iss')!
    await refusal(verifier, wrongIss.token)
    await refusal(verifier, 'a.b')
    expect(verifier.stats().rejected).toEqual({
      ERR_ISSUER_UNKNOWN: 1,
      ERR_TOKEN_MALFORMED: 1,
    })
    expect(events).toEqual([
      { type: 'token_rejected', code: 'ERR_ISSUER_UNKNOWN', alg: 'RS256' },
      { type: 'token_rejected', code: 'ERR_TOKEN_MALFORMED' },
    ])
  })

  it('survives an onEvent that throws', async () => {
    const verifier = createVerifier({
      issuer: jwks.issuer,
      secret: SECRET,
      audience: AUDIENCE,
      now: () => clock.now,
      onEvent: () => {
        throw new Error('observer bug')
      },
    })
    await expect(verifier.verify(valid[1]!.token)).resolves.toBeDefined()
    expect((await refusal(verifier, 'x.y.z')).code).toBe('ERR_TOKEN_MALFORMED')
  })

  it('refuses a non-string token', async () => {
    const error = await refusal(withSecret, 42 as unknown as string)
    expect(error.code).toBe('ERR_TOKEN_MALFORMED')
  })
})
