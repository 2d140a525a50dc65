import { createSecretKey } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import type { JwksDocument } from './jwks.js'
import type { KeyRing } from './key-ring.js'

/** Options of {@link createAccessTokenVerifier}. */
export interface AccessTokenVerifierOptions {
  /** The tenant's issuer URL; tokens of any other `iss` do not verify. */
  issuer: string
  /**
   * The tenant's HS256 secret, when it has one: HS256 tokens verify only with it. At an RS256
   * tenant, only HS256 tokens from before the switch verify (see `rs256Since`).
   */
  secret?: string
  /**
   * At an RS256 tenant: when its access tokens switched from HS256 to RS256 (epoch
   * milliseconds), as the store's algorithm record tells (`hs256SwitchTime` of it).
   * Undefined, or omitted, when the record shows no HS256 past: the tenant then takes no HS256
   * token at all, since anyone holding the secret could have made one.
   */
  rs256Since?: () => number | undefined
  /** The tenant's key ring: RS256 tokens verify only with a key it still publishes. */
  ring: KeyRing
  /**
   * TOKEN_EXPIRATION_IN_HOURS in seconds: an HS256 token at an RS256 tenant must expire within
   * one lifetime of the switch.
   */
  accessTokenTtlSeconds: number
  /** Clock, epoch milliseconds. */
  now: () => number
}

/**
 * The issuer's own check of its access tokens (for introspection): the key is chosen by `alg`
 * from a fixed source (HS256 → the secret, RS256 → the published JWKS by `kid`), so an RSA key
 * can never be used as an HMAC secret. Answers the payload, or undefined when the token does not
 * verify.
 *
 * An RS256 tenant whose record shows it signed HS256 before still takes HS256 tokens issued
 * before it switched, until they expire, but no other (a tenant RS256 from its first key none): whoever holds the HS256 secret (shared by every HS256 tenant by default)
 * could forge one. An HS256 token counts only when `iat` is before the start of the current
 * RS256 period and `exp` at most one token lifetime after it; a token issued before the switch
 * could not be otherwise. After a rollback to HS256, RS256 tokens keep verifying while their key
 * is published (the grace), as the verifiers of resource servers would.
 *
 * A JWT that carries `nonce`, `at_hash` or `azp` is an OpenID Connect ID token, whatever key
 * signed it: it is refused, since an ID token tells a client who signed in and grants nothing.
 * Access tokens never carry those claims.
 */
export function createAccessTokenVerifier(
  options: AccessTokenVerifierOptions,
): (token: string) => Promise<JWTPayload | undefined> {
  const ttl = options.accessTokenTtlSeconds
  if (!(Number.isFinite(ttl) && ttl > 0)) {
    throw new TypeError(
      'createAccessTokenVerifier: options.accessTokenTtlSeconds must be a positive number of seconds',
    )
  }
  const secretKey =
    options.secret === undefined ? undefined : createSecretKey(Buffer.from(options.secret, 'utf8'))
  let cached: { doc: JwksDocument; set: ReturnType<typeof createLocalJWKSet> } | undefined
  const keySet = (): ReturnType<typeof createLocalJWKSet> => {
    const doc = options.ring.jwks()
    // The document object only changes on a reload, so one local set serves until then.
    if (cached?.doc !== doc) cached = { doc, set: createLocalJWKSet({ keys: [...doc.keys] }) }
    return cached.set
  }
  const ttlMs = ttl * 1000
  const fromBeforeRs256 = (payload: JWTPayload): boolean => {
    if (options.ring.algorithm !== 'RS256') return true
    const since = options.rs256Since?.()
    const { iat, exp } = payload
    return (
      since !== undefined &&
      typeof iat === 'number' &&
      typeof exp === 'number' &&
      // `iat` is whole seconds and `since` milliseconds: a token of the switch's own second may
      // have come after it, so only seconds wholly before the switch count.
      (iat + 1) * 1000 <= since &&
      exp * 1000 <= since + ttlMs
    )
  }
  const verified = (payload: JWTPayload): JWTPayload | undefined =>
    isIdToken(payload) ? undefined : payload
  return async (token) => {
    try {
      const { alg } = decodeProtectedHeader(token)
      // A ring without its first key yet knows neither the keys another replica may have made
      // and signed with, nor when its RS256 period starts: the key it would make on first use
      // settles both (a tenant that verifies tokens is about to sign some).
      if (options.ring.activeKid() === undefined) await options.ring.ensureKey()
      const verifyOptions = {
        issuer: options.issuer,
        currentDate: new Date(options.now()),
        requiredClaims: ['exp'],
      }
      if (alg === 'HS256' && secretKey !== undefined) {
        const { payload } = await jwtVerify(token, secretKey, {
          ...verifyOptions,
          algorithms: ['HS256'],
        })
        return fromBeforeRs256(payload) ? verified(payload) : undefined
      }
      if (alg === 'RS256') {
        const { payload } = await jwtVerify(token, keySet(), {
          ...verifyOptions,
          algorithms: ['RS256'],
        })
        return verified(payload)
      }
      return undefined
    } catch {
      return undefined
    }
  }
}

/** The claims only an ID token carries (OpenID Connect Core §2): never in an access token. */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'azp'] as const

/** Whether `payload` is that of an ID token rather than an access token. */
function isIdToken(payload: JWTPayload): boolean {
  return ID_TOKEN_CLAIMS.some((claim) => Object.hasOwn(payload, claim))
}
