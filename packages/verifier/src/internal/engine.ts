import { createSecretKey } from 'node:crypto'
import { flattenedVerify } from 'jose'
import type { KeyLike, VerifyOptions } from 'jose'
import { VerifierError } from '../errors.js'
import type { VerifierErrorCode } from '../errors.js'
import type { Algorithm, VerifierEvent, VerifierStats } from '../options.js'
import type { VerifiedToken, Verifier } from '../verifier.js'
import { checkClaims, fromJose } from './claims.js'
import type { ClaimRules } from './claims.js'
import { createCounters, snapshot } from './counters.js'
import { KID_PATTERN } from './jwks.js'
import { IssuerKeyCache } from './key-cache.js'
import type { ResolvedOptions } from './options.js'
import { TokenCache } from './token-cache.js'
import { decodePayload, decodeToken, HeaderCache, splitToken } from './token.js'
import type { CompactSegments } from './token.js'

/**
 * The verification behind a {@link Verifier}, in the steps the adapters take one by one: a
 * token is hashed once, a token cache hit is answered without a turn of the event loop, and the
 * token's shape is checked once, not by the adapter and the verifier each.
 */
export interface Engine {
  /** The configured issuers. */
  readonly issuers: readonly string[]
  /** A snapshot of the counters. */
  readonly stats: () => VerifierStats
  /** {@link Verifier.verify}: the token cache, then {@link Engine.verifyUncached} on a miss. */
  readonly verify: (token: string) => Promise<VerifiedToken>
  /**
   * The token cache key of `token`; `undefined` without a token cache, or for what is not a
   * string or is longer than `maxTokenLength` (never hashed: the verification refuses it).
   */
  cacheKeyOf(token: string): string | undefined
  /**
   * The cached verification of the token with this key, counted as a hit (`tokenCacheHits` and
   * `accepted`), or `undefined`: never cached, expired, or its key gone from the issuer's fresh
   * JWKS. Never throws; on a miss, {@link Engine.verifyUncached} decides and reports.
   */
  cachedResult(cacheKey: string): VerifiedToken | undefined
  /**
   * Verifies a token that is not in the token cache, and caches the result under `cacheKey`
   * when there is one. `segments`: the token already split by `compactSegments`, or `undefined`
   * to have it split and its shape checked here. Everything refused is counted and reported,
   * once, and rejects with a {@link VerifierError}.
   */
  verifyUncached(
    token: string,
    cacheKey: string | undefined,
    segments: CompactSegments | undefined,
  ): Promise<VerifiedToken>
}

const ENGINE: unique symbol = Symbol('@tessera/verifier engine')

/** A verifier made by {@link verifierOf}, carrying its engine under a key of this module. */
type WithEngine = Verifier & { readonly [ENGINE]?: Engine }

/**
 * The public face of an engine. The engine rides along under a symbol, invisible to
 * `Object.keys` and JSON, for {@link engineOf}.
 */
export function verifierOf(engine: Engine): Verifier {
  const verifier: WithEngine = {
    issuers: engine.issuers,
    stats: engine.stats,
    verify: engine.verify,
    [ENGINE]: engine,
  }
  return verifier
}

/** The engine of a verifier made by `createVerifier`; `undefined` for any other object. */
export function engineOf(verifier: Verifier): Engine | undefined {
  return (verifier as WithEngine)[ENGINE]
}

/** Why an HS256 token is refused by a verifier created without `secret`. */
const HS256_NEEDS_SECRET = 'The token algorithm HS256 needs a secret, and this verifier has none'

// Built once, not per verification: jose allows exactly the one algorithm the token names and
// that is already known to be in `algorithms`.
const JOSE_OPTIONS: Readonly<Record<Algorithm, VerifyOptions>> = {
  HS256: { algorithms: ['HS256'] },
  RS256: { algorithms: ['RS256'] },
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

/** An engine for options already checked by `resolveOptions`. */
export function createEngine(settings: ResolvedOptions): Engine {
  const { algorithms, issuers, maxTokenLength, now, onEvent } = settings
  const rules: ClaimRules = {
    clockTolerance: settings.clockTolerance,
    audience: settings.audience,
  }
  const counters = createCounters()
  const emit = (event: VerifierEvent): void => {
    if (onEvent === undefined) return
    try {
      onEvent(event)
    } catch {
      // A failing observer must never change a verification's outcome.
    }
  }
  // Imported once: jose would re-import raw bytes on every verification.
  const secretKey =
    settings.secret === undefined
      ? undefined
      : createSecretKey(Buffer.from(settings.secret, 'utf8'))
  const keyCaches = new Map<string, IssuerKeyCache>()
  for (const issuer of issuers) {
    keyCaches.set(
      issuer,
      new IssuerKeyCache({
        issuer,
        uri: settings.jwksUris.get(issuer) as string,
        cacheMaxAge: settings.cacheMaxAge,
        cooldown: settings.cooldown,
        timeout: settings.timeout,
        maxStale: settings.maxStale,
        fetch: settings.fetch,
        now,
        emit,
        counters,
      }),
    )
  }
  const tokenCache =
    settings.tokenCacheMax === undefined
      ? undefined
      : new TokenCache<VerifiedToken>(settings.tokenCacheMax)
  const headerCache = new HeaderCache()

  function cacheKeyOf(token: string): string | undefined {
    return tokenCache === undefined || typeof token !== 'string' || token.length > maxTokenLength
      ? undefined
      : TokenCache.keyOf(token)
  }

  function cachedResult(cacheKey: string): VerifiedToken | undefined {
    if (tokenCache === undefined) return undefined
    let nowMs: number
    try {
      nowMs = now()
    } catch {
      // A clock that throws: the verification that follows the miss reports it.
      return undefined
    }
    const entry = tokenCache.get(cacheKey, nowMs)
    if (entry === undefined) return undefined
    // An RS256 entry lives only as long as its key stays in a fresh copy of the issuer's JWKS.
    if (
      entry.keyCache !== undefined &&
      entry.keyCache.fresh(entry.kid as string, nowMs) !== entry.key
    ) {
      tokenCache.delete(cacheKey)
      return undefined
    }
    counters.tokenCacheHits += 1
    counters.accepted[entry.result.protectedHeader.alg] += 1
    return entry.result
  }

  async function verifyUncached(
    token: string,
    cacheKey: string | undefined,
    segments: CompactSegments | undefined,
  ): Promise<VerifiedToken> {
    try {
      if (typeof token !== 'string') {
        throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token is not a string')
      }
      // Before any decoding: a huge token costs nothing but this comparison.
      if (token.length > maxTokenLength) {
        throw new VerifierError('ERR_TOKEN_TOO_LONG', 'The token is too long')
      }
      const parts = segments ?? splitToken(token)
      // The header of an issuer's tokens is the same for every token it signs with one key:
      // decoded (and its refused parameters checked) once per distinct header segment.
      const header = headerCache.decode(parts.protected)
      const payload = decodePayload(parts.payload)
      const alg = header.alg
      // Exact, case-sensitive match against the allowlist: `none`, `NONE`, a missing alg,
      // RS384, ES256 or HS512 all stop here, before any key is chosen.
      if (typeof alg !== 'string' || !algorithms.has(alg as Algorithm)) {
        // HS256 refused only because no secret was given: say so, as the fix is the API's.
        const message = alg === 'HS256' && secretKey === undefined ? HS256_NEEDS_SECRET : undefined
        throw new VerifierError(
          'ERR_ALG_NOT_ALLOWED',
          message ?? 'The token algorithm is not accepted',
        )
      }
      const iss = payload.iss
      if (typeof iss !== 'string' || !issuers.has(iss)) {
        throw new VerifierError('ERR_ISSUER_UNKNOWN', 'The token issuer is not accepted')
      }
      checkClaims(payload, now(), rules)

      let key: KeyLike
      let kid: string | undefined
      let keyCache: IssuerKeyCache | undefined
      if (alg === 'HS256') {
        // The secret alone, whatever kid the token names: a kid never selects an HMAC key.
        key = secretKey as KeyLike
      } else {
        if (header.kid === undefined) {
          throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token header has no kid')
        }
        if (typeof header.kid !== 'string' || !KID_PATTERN.test(header.kid)) {
          throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token kid is malformed')
        }
        kid = header.kid
        keyCache = keyCaches.get(iss)
        if (keyCache === undefined) {
          throw new VerifierError('ERR_ISSUER_UNKNOWN', 'The token issuer is not accepted')
        }
        // The common case, a fresh cached key, costs no extra turn of the event loop.
        key = keyCache.fresh(kid) ?? (await keyCache.get(kid))
      }

      // jose checks the signature, and that the key suits the one allowed algorithm (an RSA
      // public key is never an HMAC secret). It gets the segments already split and checked
      // (the flattened form of the same JWS spares it a second split). The claims are those
      // already decoded from the same signed bytes: checked again now, as time may have passed
      // during a key fetch.
      const { protectedHeader } = await flattenedVerify(parts, key, JOSE_OPTIONS[alg as Algorithm])
      const checkedAt = now()
      checkClaims(payload, checkedAt, rules)
      const result = { payload, protectedHeader } as unknown as VerifiedToken
      counters.accepted[alg as Algorithm] += 1
      if (tokenCache !== undefined && cacheKey !== undefined) {
        const expiresAt = result.payload.exp * 1000
        // Within the clock tolerance past exp the token is still accepted, but an entry would
        // already be over: not worth storing.
        if (expiresAt > checkedAt) {
          tokenCache.set(cacheKey, { result: deepFreeze(result), expiresAt, keyCache, kid, key })
        }
      }
      return result
    } catch (error) {
      throw reject(error, token)
    }
  }

  /** Counts and reports a refusal; what it returns is what the caller rejects with. */
  function reject(error: unknown, token: unknown): VerifierError {
    const refused = fromJose(error)
    const code: VerifierErrorCode = refused.code
    counters.rejected.set(code, (counters.rejected.get(code) ?? 0) + 1)
    if (onEvent !== undefined) {
      let alg: string | undefined
      let issuer: string | undefined
      let hint: string | undefined
      if (typeof token === 'string' && token.length <= maxTokenLength) {
        try {
          const { header, payload } = decodeToken(token)
          if (typeof header.alg === 'string' && algorithms.has(header.alg as Algorithm)) {
            alg = header.alg
          } else if (header.alg === 'HS256' && refused.message === HS256_NEEDS_SECRET) {
            alg = 'HS256'
            hint = 'HS256 tokens need the secret option'
          }
          if (typeof payload.iss === 'string' && issuers.has(payload.iss)) issuer = payload.iss
        } catch {
          // Nothing more to report about a token that does not decode.
        }
      }
      emit({
        type: 'token_rejected',
        code,
        ...(alg === undefined ? {} : { alg }),
        ...(issuer === undefined ? {} : { issuer }),
        ...(hint === undefined ? {} : { hint }),
      })
    }
    return refused
  }

  return {
    issuers: [...issuers],
    stats: () => snapshot(counters),
    verify: (token) => {
      const cacheKey = cacheKeyOf(token)
      if (cacheKey !== undefined) {
        const hit = cachedResult(cacheKey)
        if (hit !== undefined) return Promise.resolve(hit)
      }
      return verifyUncached(token, cacheKey, undefined)
    },
    cacheKeyOf,
    cachedResult,
    verifyUncached,
  }
}
