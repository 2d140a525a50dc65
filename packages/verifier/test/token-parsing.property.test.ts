import { createHmac } from 'node:crypto'
import * as fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, VerifierError } from '../src/index.js'
import type { Verifier } from '../src/index.js'
import { createAuthenticator } from '../src/internal/authenticate.js'
import { claims, createTestKey, SECRET, signRs256 } from './support/keys.js'
import type { TestKey } from './support/keys.js'

// Whatever arrives as a token or an Authorization header, the verifier answers with
// its own error type (which the adapters turn into 400/401), never with another exception.
const RUNS = 10_000
const ISSUER = 'https://issuer.test'
const NOW = Date.UTC(2026, 10, 22, 8)
/** The kid of the one key the issuer's key set holds. */
const KID = '2026-11-22'

let key: TestKey
let verifier: Verifier
let fetches = 0

beforeAll(async () => {
  key = await createTestKey(KID)
  verifier = createVerifier({
    issuer: ISSUER,
    secret: SECRET,
    audience: 'https://api.test',
    now: () => NOW,
    // The issuer's key set, served without a network; every kid but one is unknown.
    fetch: () => {
      fetches++
      return Promise.resolve(
        new Response(JSON.stringify({ keys: [key.jwk] }), {
          headers: { 'content-type': 'application/json' },
        }),
      )
    },
  })
  // A valid token passes, so the properties below do exercise a working verifier.
  const token = await signRs256(key, claims(ISSUER, Math.floor(NOW / 1000)))
  await expect(verifier.verify(token)).resolves.toMatchObject({ payload: { iss: ISSUER } })
})

const b64url = (value: string | Uint8Array): string => Buffer.from(value).toString('base64url')

/** Any JSON value, including the hostile ones: deep, odd keys, huge and fractional numbers. */
const json = fc.jsonValue({ maxDepth: 3 })
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }))
const hostile = fc.oneof(json, text, fc.double(), fc.integer({ min: -(2 ** 53), max: 2 ** 53 }))
const nowSeconds = Math.floor(NOW / 1000)
/** Mostly the value a valid token has, so that the later checks are reached; else anything. */
const claim = (valid: unknown) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: hostile })

/** A header a forger would try: known and unknown algorithms and key ids, refused members. */
const header = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        alg: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('HS256', 'RS256') },
          { weight: 1, arbitrary: fc.oneof(fc.constantFrom('none', 'ES256', 'HS512'), json) },
        ),
        kid: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(KID, '2026-01-01') },
          { weight: 1, arbitrary: fc.oneof(text, json) },
        ),
        typ: fc.oneof(fc.constant('JWT'), text, json),
      },
      { requiredKeys: ['alg'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { alg: fc.constant('HS256'), crit: json, b64: json, jku: text, jwk: json },
      {
        requiredKeys: ['alg'],
      },
    ),
  },
  { weight: 1, arbitrary: json },
)
const payload = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        iss: claim(ISSUER),
        aud: claim('https://api.test'),
        exp: claim(nowSeconds + 60),
        sub: claim('user-1'),
        nbf: claim(nowSeconds - 10),
        iat: claim(nowSeconds - 10),
        scope: claim('read write'),
        client_id: claim('11111111-1111-4111-8111-111111111111'),
        jti: claim('jti-1'),
      },
      { requiredKeys: ['iss', 'aud', 'exp'] },
    ),
  },
  { weight: 1, arbitrary: json },
)

/** Compact JWS-looking strings: encoded JSON, signed with the real secret or not at all. */
const structuredToken = fc
  .tuple(
    fc.oneof(header, json),
    payload,
    fc.constantFrom('hmac', 'hmac', 'hmac', 'random', 'empty', 'garbage'),
    fc.uint8Array({ maxLength: 300 }),
    text,
  )
  .map(([head, body, signature, bytes, garbage]) => {
    const input = `${b64url(JSON.stringify(head))}.${b64url(JSON.stringify(body) ?? '')}`
    switch (signature) {
      case 'hmac':
        return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
      case 'random':
        return `${input}.${b64url(bytes)}`
      case 'empty':
        return `${input}.`
      default:
        return `${input}.${garbage}`
    }
  })

/** Strings made of the characters tokens are made of, dots included, and anything else. */
const tokenLike = fc.oneof(
  text,
  fc.stringMatching(/^[A-Za-z0-9_\-.]{0,200}$/),
  fc
    .array(fc.oneof(fc.base64String(), fc.stringMatching(/^[A-Za-z0-9_-]*$/), text), {
      maxLength: 5,
    })
    .map((parts) => parts.join('.')),
  { weight: 5, arbitrary: structuredToken },
)

/** How often each answer came, by error code (`ok` for a verified token). */
type Outcomes = Map<string, number>

async function onlyVerifierErrors(outcomes: Outcomes, run: () => unknown): Promise<void> {
  let outcome = 'ok'
  try {
    await run()
  } catch (error) {
    if (!(error instanceof VerifierError)) throw error
    outcome = error.code
  }
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
}

describe('verifier token parsing (property)', () => {
  it(`verify() answers ${RUNS} arbitrary tokens with a VerifierError or a result`, async () => {
    const outcomes: Outcomes = new Map()
    await fc.assert(
      fc.asyncProperty(tokenLike, async (token) => {
        await onlyVerifierErrors(outcomes, () => verifier.verify(token))
      }),
      { numRuns: RUNS },
    )
    // The tokens reached every stage: shape, header, key choice, signature, claims.
    for (const code of [
      'ERR_TOKEN_MALFORMED',
      'ERR_ALG_NOT_ALLOWED',
      'ERR_ISSUER_UNKNOWN',
      'ERR_KID_UNKNOWN',
      'ERR_TOKEN_INVALID',
      'ERR_CLAIM_INVALID',
    ]) {
      expect(outcomes.get(code), code).toBeGreaterThan(0)
    }
    // One fetch at most per cooldown, however many unknown kids were tried.
    expect(fetches).toBeLessThanOrEqual(2)
  })

  it(`the adapters' header parsing answers ${RUNS} arbitrary Authorization headers the same way`, async () => {
    const authenticate = createAuthenticator(verifier, { realm: 'api' })
    const headerValue = fc.oneof(
      text,
      tokenLike.map((token) => `Bearer ${token}`),
      fc
        .tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', ''), text, tokenLike)
        .map(([scheme, gap, token]) => `${scheme}${gap}${token}`),
      fc.constantFrom(undefined, null, '', ' ', 'Bearer', 'Bearer ', 'Bearer  .', 'Bearer ='),
    )
    const outcomes: Outcomes = new Map()
    await fc.assert(
      fc.asyncProperty(headerValue, async (value) => {
        await onlyVerifierErrors(outcomes, () =>
          authenticate(value, () => ({ method: 'GET', url: 'http://api.test/', proof: undefined })),
        )
      }),
      { numRuns: RUNS },
    )
    for (const code of ['ERR_TOKEN_MISSING', 'ERR_AUTHORIZATION_INVALID', 'ERR_TOKEN_INVALID']) {
      expect(outcomes.get(code), code).toBeGreaterThan(0)
    }
  })
})
