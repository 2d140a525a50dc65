import { createSecretKey } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import type { JwksDocument } from './jwks.js'
import type { KeyRing } from './key-ring.js'

/** Options of {@link createAccessTokenVerifier}. */
export interface AccessTokenVerifierOptions {
  /** The tenant's issuer URL; tokens of any other `iss` do not verify. */
  issuer: string
  /** The tenant's HS256 secret, when it has one: HS256 tokens verify only with it. */
  secret?: string
  /** The tenant's key ring: RS256 tokens verify only with a key it still publishes. */
  ring: KeyRing
  /** Clock, epoch milliseconds. */
  now: () => number
}

/**
 * The issuer's own check of its access tokens (for introspection): the key is chosen by `alg`
 * from a fixed source (HS256 → the secret, RS256 → the published JWKS by `kid`), so an RSA key
 * can never be used as an HMAC secret. Answers the payload, or undefined when the token does not
 * verify.
 */
export function createAccessTokenVerifier(
  options: AccessTokenVerifierOptions,
): (token: string) => Promise<JWTPayload | undefined> {
  const secretKey =
    options.secret === undefined ? undefined : createSecretKey(Buffer.from(options.secret, 'utf8'))
  let cached: { doc: JwksDocument; set: ReturnType<typeof createLocalJWKSet> } | undefined
  const keySet = (): ReturnType<typeof createLocalJWKSet> => {
    const doc = options.ring.jwks()
    // The document object only changes on a reload, so one local set serves until then.
    if (cached?.doc !== doc) cached = { doc, set: createLocalJWKSet({ keys: [...doc.keys] }) }
    return cached.set
  }
  return async (token) => {
    try {
      const { alg } = decodeProtectedHeader(token)
      const verifyOptions = {
        issuer: options.issuer,
        currentDate: new Date(options.now()),
        requiredClaims: ['exp'],
      }
      if (alg === 'HS256' && secretKey !== undefined) {
        return (await jwtVerify(token, secretKey, { ...verifyOptions, algorithms: ['HS256'] }))
          .payload
      }
      if (alg === 'RS256') {
        return (await jwtVerify(token, keySet(), { ...verifyOptions, algorithms: ['RS256'] }))
          .payload
      }
      return undefined
    } catch {
      return undefined
    }
  }
}
