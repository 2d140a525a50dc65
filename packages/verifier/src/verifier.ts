import { createSecretKey } from 'node:crypto'
import { errors, flattenedVerify } from 'jose'
import type { KeyLike, VerifyOptions } from 'jose'
import { VerifierError } from './errors.js'
import type { VerifierErrorCode } from './errors.js'
import type { Algorithm, VerifierEvent, VerifierOptions, VerifierStats } from './options.js'
import { registerAdapterPath } from './internal/adapter-path.js'
import { createCounters, snapshot } from './internal/counters.js'
import { KID_PATTERN } from './internal/jwks.js'
import { IssuerKeyCache } from './internal/key-cache.js'
import { resolveOptions } from './internal/options.js'
import { TokenCache } from './internal/token-cache.js'
import { decodePayload, decodeToken, HeaderCache, splitToken } from './internal/token.js'
import type { JsonObject } from './internal/token.js'

/**
 * The claims of a verified access token. `iss` and `exp` are always present and checked; the
 * others are as the issuer wrote them.
 */
export interface AccessTokenClaims {
  /** The issuer URL, one of the configured issuers. */
  iss: string
  /** Expiry, in seconds since the epoch. */
  exp: number
  /** The subject: the user, or the client for client tokens. Not checked. */
  sub?: string
  /** The audience; checked when `audience` is configured. */
  aud?: string | string[]
  /** Issued at, in seconds; refused when in the future beyond `clockTolerance`. */
  iat?: number
  /** Not before, in seconds; refused when in the future beyond `clockTolerance`. */
  nbf?: number
  /** The token's unique id. Not checked (no replay detection). */
  jti?: string
  /** The client the token was issued to. Not checked. */
  client_id?: string
  /** Space-separated scopes (RFC 9068 §2.2.3); must be a string when present. */
  scope?: string
  /** Any other claim, unchecked. */
  [claim: string]: unknown
}

/** The protected header of a verified token. */
export interface TokenHeader {
  /** The algorithm, one of `algorithms`. */
  alg: Algorithm
  /** `JWT` for Tessera tokens. Not checked. */
  typ?: string
  /** The key id; RS256 only. */
  kid?: string
  /** Any other header parameter, unchecked. */
  [parameter: string]: unknown
}

/** What {@link Verifier.verify} resolves to. */
export interface VerifiedToken {
  /** The verified claims. */
  payload: AccessTokenClaims
  /** The verified protected header. */
  protectedHeader: TokenHeader
}

/** A token verifier with its own key caches and counters; create one per process and reuse it. */
export interface Verifier {
  /**
   * Verifies a compact JWS access token: length, structure, `alg` against `algorithms`, `iss`
   * against the configured issuers, `exp`, `nbf`, `iat` and `aud`, then the signature with the
   * key that the algorithm's source gives (HS256: the secret; RS256: the issuer's JWKS by
   * `kid`). Throws a {@link VerifierError}.
   */
  verify(token: string): Promise<VerifiedToken>
  /** A snapshot of the counters: JWKS fetches and failures, stale keys, kids, per-alg totals. */
  stats(): VerifierStats
  /** The configured issuers. */
  readonly issuers: readonly string[]
}

type Result = VerifiedToken

function claimInvalid(claim: string, message: string): VerifierError {
  return new VerifierError('ERR_CLAIM_INVALID', message, { claim })
}

/** Maps what jose throws to our codes; messages are ours, jose's stays in `cause`. */
function fromJose(error: unknown): VerifierError {
  if (error instanceof VerifierError) return error
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new VerifierError('ERR_TOKEN_INVALID', 'The token signature is invalid', {
      cause: error,
    })
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new VerifierError('ERR_ALG_NOT_ALLOWED', 'The token algorithm is not accepted', {
      cause: error,
    })
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JOSENotSupported) {
    return new VerifierError('ERR_TOKEN_MALFORMED', 'The token is malformed', { cause: error })
  }
  // Fail closed: whatever else went wrong, the token is not accepted.
  return new VerifierError('ERR_TOKEN_INVALID', 'The access token is invalid', { cause: error })
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

/**
 * Creates a verifier for Tessera access tokens. Options are checked once, here: a bad option
 * throws a `TypeError` naming it (a secret under 32 characters, HS256 without a secret, an
 * issuer that is not an http(s) URL, an unknown option, …).
 *
 * Key selection follows the algorithm, from a fixed source: an HS256 token is checked with the
 * secret alone, whatever `kid` it carries, and never causes a fetch; an RS256 token only with a
 * key from its issuer's JWKS, found by `kid`. The RSA public key can therefore never serve as
 * an HMAC secret, and `alg: none` or an algorithm outside `algorithms` is refused before any
 * network call.
 *
 * Not checked: `sub`, `jti` (no replay detection), `client_id`, the `typ` header, revocation
 * (the issuer is never asked), and proof-of-possession (`cnf`). `scope` is checked by the
 * adapters' `requireScope` only.
 *
 * @example
 * ```ts
 * import { createVerifier } from '@tessera/verifier'
 *
 * const verifier = createVerifier({
 *   issuer: ['https://acme.example.com', 'https://legacy.example.com'],
 *   audience: 'https://api.acme.test',
 *   secret: process.env.JWT_SECRET, // enables HS256; leave out once every issuer uses RS256
 * })
 * const { payload } = await verifier.verify(token)
 * ```
 * @see RFC 8725 (JSON Web Token Best Current Practices)
 * @see RFC 7519 §7.2 (Validating a JWT)
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const settings = resolveOptions(options)
  const { algorithms, issuers, audience, clockTolerance, maxTokenLength, now } = settings
  const counters = createCounters()
  const onEvent = settings.onEvent
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
      : new TokenCache<Result>(settings.tokenCacheMax)
  const headerCache = new HeaderCache()
  // Built once, not per verification: jose allows exactly the one algorithm the token names
  // and that is already known to be in `algorithms`.
  const joseOptions: Record<Algorithm, VerifyOptions> = {
    HS256: { algorithms: ['HS256'] },
    RS256: { algorithms: ['RS256'] },
  }

  /** Claim checks on the unverified payload, so that a doomed token never causes a fetch. */
  function checkClaims(payload: JsonObject, nowMs: number): void {
    const nowSeconds = Math.floor(nowMs / 1000)
    const { exp, nbf, iat, aud, scope } = payload
    if (typeof exp !== 'number' || !Number.isFinite(exp)) {
      throw claimInvalid('exp', 'The token has no valid exp claim')
    }
    // RFC 7519 §4.1.4: not accepted on or after exp; the tolerance absorbs clock skew.
    if (exp <= nowSeconds - clockTolerance) {
      throw new VerifierError('ERR_TOKEN_EXPIRED', 'The token has expired', { claim: 'exp' })
    }
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds + clockTolerance)) {
      throw claimInvalid('nbf', 'The token is not valid yet')
    }
    if (iat !== undefined && (typeof iat !== 'number' || iat > nowSeconds + clockTolerance)) {
      throw claimInvalid('iat', 'The token was issued in the future')
    }
    if (audience !== undefined) {
      const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : []
      if (!values.some((value) => typeof value === 'string' && audience.includes(value))) {
        throw claimInvalid('aud', 'The token aud claim is not accepted')
      }
    }
    if (scope !== undefined && typeof scope !== 'string') {
      throw claimInvalid('scope', 'The token scope claim is not a string')
    }
  }

  /**
   * Verifies `token`. With `lookUp`, a token cache hit answers at once; without, the caller has
   * just looked `cacheKey` up and missed. `compact`: the caller has seen the token's shape hold.
   * Everything thrown is counted and reported, once.
   */
  async function verifyToken(
    token: string,
    cacheKey: string | undefined,
    lookUp: boolean,
    compact: boolean,
  ): Promise<Result> {
    try {
      if (typeof token !== 'string') {
        throw new VerifierError('ERR_TOKEN_MALFORMED', 'The token is not a string')
      }
      // Before any decoding: a huge token costs nothing but this comparison.
      if (token.length > maxTokenLength) {
        throw new VerifierError('ERR_TOKEN_TOO_LONG', 'The token is too long')
      }
      if (lookUp && tokenCache !== undefined) {
        cacheKey = TokenCache.keyOf(token)
        const cached = fromTokenCache(cacheKey)
        if (cached !== undefined) return cached
      }

      const segments = splitToken(token, compact)
      // The header of an issuer's tokens is the same for every token it signs with one key:
      // decoded (and its refused parameters checked) once per distinct header segment.
      const header = headerCache.decode(segments.protected)
      const payload = decodePayload(segments.payload)
      const alg = header.alg
      // Exact, case-sensitive match against the allowlist: `none`, `NONE`, a missing alg,
      // RS384, ES256 or HS512 all stop here, before any key is chosen.
      if (typeof alg !== 'string' || !algorithms.has(alg as Algorithm)) {
        throw new VerifierError('ERR_ALG_NOT_ALLOWED', 'The token algorithm is not accepted')
      }
      const iss = payload.iss
      if (typeof iss !== 'string' || !issuers.has(iss)) {
        throw new VerifierError('ERR_ISSUER_UNKNOWN', 'The token issuer is not accepted')
      }
      checkClaims(payload, now())

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
      const { protectedHeader } = await flattenedVerify(
        segments,
        key,
        joseOptions[alg as Algorithm],
      )
      const checkedAt = now()
      checkClaims(payload, checkedAt)
      const result = { payload, protectedHeader } as unknown as Result
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

  function fromTokenCache(cacheKey: string): Result | undefined {
    if (tokenCache === undefined) return undefined
    const nowMs = now()
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

  function reject(error: unknown, token: unknown): VerifierError {
    const refused = fromJose(error)
    const code: VerifierErrorCode = refused.code
    counters.rejected.set(code, (counters.rejected.get(code) ?? 0) + 1)
    if (onEvent !== undefined) {
      let alg: string | undefined
      let issuer: string | undefined
      if (typeof token === 'string' && token.length <= maxTokenLength) {
        try {
          const { header, payload } = decodeToken(token)
          if (typeof header.alg === 'string' && algorithms.has(header.alg as Algorithm)) {
            alg = header.alg
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
      })
    }
    return refused
  }

  const verifier: Verifier = {
    issuers: [...issuers],
    stats: () => snapshot(counters),
    verify: (token) => verifyToken(token, undefined, true, false),
  }
  registerAdapterPath(verifier, {
    keyOf: (token) =>
      tokenCache === undefined || token.length > maxTokenLength
        ? undefined
        : TokenCache.keyOf(token),
    cached(cacheKey) {
      try {
        return fromTokenCache(cacheKey)
      } catch {
        // A clock that throws: the verification that follows the miss reports it.
        return undefined
      }
    },
    verify: (token, cacheKey, compact) => verifyToken(token, cacheKey, false, compact),
  })
  return verifier
}
