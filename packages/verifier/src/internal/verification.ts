import { createSecretKey } from 'node:crypto'
import { flattenedVerify } from 'jose'
import type { KeyLike, VerifyOptions } from 'jose'
import { VerifierError } from '../errors.js'
import type { VerifierErrorCode } from '../errors.js'
import type { Algorithm, VerifierEvent } from '../options.js'
import type { VerifiedToken } from '../verifier.js'
import { checkClaims, fromJose } from './claims.js'
import type { ClaimRules } from './claims.js'
import { createCounters } from './counters.js'
import type { Counters } from './counters.js'
import { KID_PATTERN } from './jwks.js'
import { IssuerKeyCache } from './key-cache.js'
import type { ResolvedOptions } from './options.js'
import { TokenCache } from './token-cache.js'
import { decodePayload, decodeToken, HeaderCache, splitToken } from './token.js'
import type { CompactSegments, JsonObject } from './token.js'

/** What an engine keeps for its lifetime: its settings, counters, keys and caches. */
export interface EngineParts {
  readonly algorithms: ReadonlySet<Algorithm>
  readonly issuers: ReadonlySet<string>
  readonly maxTokenLength: number
  readonly now: () => number
  readonly onEvent: ((event: VerifierEvent) => void) | undefined
  readonly rules: ClaimRules
  readonly counters: Counters
  /** Calls `onEvent`, whose throws never change a verification's outcome. */
  readonly emit: (event: VerifierEvent) => void
  /** The HS256 secret, imported once; undefined without `secret`. */
  readonly secretKey: KeyLike | undefined
  /** issuer → the cache of its JWKS keys */
  readonly keyCaches: ReadonlyMap<string, IssuerKeyCache>
  readonly tokenCache: TokenCache<VerifiedToken> | undefined
  readonly headerCache: HeaderCache
}

/** The parts of an engine for options already checked by `resolveOptions`. */
export function createEngineParts(settings: ResolvedOptions): EngineParts {
  const { issuers, now, onEvent } = settings
  const counters = createCounters()
  const emit = (event: VerifierEvent): void => {
    if (onEvent === undefined) return
    try {
      onEvent(event)
    } catch {
      // A failing observer must never change a verification's outcome.
    }
  }
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
  return {
    algorithms: settings.algorithms,
    issuers,
    maxTokenLength: settings.maxTokenLength,
    now,
    onEvent,
    rules: { clockTolerance: settings.clockTolerance, audience: settings.audience },
    counters,
    emit,
    // Imported once: jose would re-import raw bytes on every verification.
    secretKey:
      settings.secret === undefined
        ? undefined
        : createSecretKey(Buffer.from(settings.secret, 'utf8')),
    keyCaches,
    tokenCache:
      settings.tokenCacheMax === undefined
        ? undefined
        : new TokenCache<VerifiedToken>(settings.tokenCacheMax),
    headerCache: new HeaderCache(),
  }
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

/** The key that verifies a token, with the JWKS cache and kid an RS256 key comes from. */
interface ChosenKey {
  key: KeyLike
  kid?: string
  keyCache?: IssuerKeyCache
}

/** Chooses the key for a token whose `alg` is allowed and whose `iss` is configured. */
async function keyFor(
  parts: EngineParts,
  alg: Algorithm,
  header: JsonObject,
  iss: string,
): Promise<ChosenKey> {
  // The secret alone, whatever kid the token names: a kid never selects an HMAC key.
  if (alg === 'HS256') return { key: parts.secretKey as KeyLike }
  if (header.kid === undefined) {
    throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token header has no kid')
  }
  if (typeof header.kid !== 'string' || !KID_PATTERN.test(header.kid)) {
    throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token kid is malformed')
  }
  const kid = header.kid
  const keyCache = parts.keyCaches.get(iss)
  if (keyCache === undefined) {
    throw new VerifierError('ERR_ISSUER_UNKNOWN', 'The token issuer is not accepted')
  }
  // The common case, a fresh cached key, costs no extra turn of the event loop.
  const key = keyCache.fresh(kid) ?? (await keyCache.get(kid))
  return { key, kid, keyCache }
}

/**
 * {@link Engine.verifyUncached}: verifies a token that is not in the token cache and caches the
 * result under `cacheKey` when there is one. Everything refused is counted and reported, once,
 * and rejects with a {@link VerifierError}.
 */
export async function verifyUncached(
  parts: EngineParts,
  token: string,
  cacheKey: string | undefined,
  segments: CompactSegments | undefined,
): Promise<VerifiedToken> {
  const { algorithms, issuers, now, rules, secretKey, tokenCache } = parts
  try {
    if (typeof token !== 'string') {
      throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token is not a string')
    }
    // Before any decoding: a huge token costs nothing but this comparison.
    if (token.length > parts.maxTokenLength) {
      throw new VerifierError('ERR_TOKEN_TOO_LONG', 'The token is too long')
    }
    const split = segments ?? splitToken(token)
    // The header of an issuer's tokens is the same for every token it signs with one key:
    // decoded (and its refused parameters checked) once per distinct header segment.
    const header = parts.headerCache.decode(split.protected)
    const payload = decodePayload(split.payload)
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
    const { key, kid, keyCache } = await keyFor(parts, alg as Algorithm, header, iss)

    // jose checks the signature, and that the key suits the one allowed algorithm (an RSA
    // public key is never an HMAC secret). It gets the segments already split and checked
    // (the flattened form of the same JWS spares it a second split). The claims are those
    // already decoded from the same signed bytes: checked again now, as time may have passed
    // during a key fetch.
    const { protectedHeader } = await flattenedVerify(split, key, JOSE_OPTIONS[alg as Algorithm])
    const checkedAt = now()
    checkClaims(payload, checkedAt, rules)
    const result = { payload, protectedHeader } as unknown as VerifiedToken
    parts.counters.accepted[alg as Algorithm] += 1
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
    throw reject(parts, error, token)
  }
}

/** Counts and reports a refusal; what it returns is what the caller rejects with. */
export function reject(parts: EngineParts, error: unknown, token: unknown): VerifierError {
  const { algorithms, counters, issuers } = parts
  const refused = fromJose(error)
  const code: VerifierErrorCode = refused.code
  counters.rejected.set(code, (counters.rejected.get(code) ?? 0) + 1)
  if (parts.onEvent !== undefined) {
    let alg: string | undefined
    let issuer: string | undefined
    let hint: string | undefined
    if (typeof token === 'string' && token.length <= parts.maxTokenLength) {
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
    parts.emit({
      type: 'token_rejected',
      code,
      ...(alg === undefined ? {} : { alg }),
      ...(issuer === undefined ? {} : { issuer }),
      ...(hint === undefined ? {} : { hint }),
    })
  }
  return refused
}
