import { CLIENT_ASSERTION_ALGORITHMS } from '@tessera/config-schema'
import type { Client } from '@tessera/config-schema'
import { errors, jwtVerify } from 'jose'
import type { JWTPayload } from 'jose'
import { sha256Hex } from './crypto.js'
import { ClientKeysUnavailableError, OAuthError } from './errors.js'
import type { ClientKeys, MarkStore } from './ports.js'

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** Seconds of clock skew allowed on `exp`, `nbf` and `iat`. */
export const CLIENT_ASSERTION_CLOCK_TOLERANCE_SECONDS = 30

/** How far ahead `exp` may be: an assertion is a one-off proof, not a credential to keep. */
export const MAX_CLIENT_ASSERTION_LIFETIME_SECONDS = 300

/** An assertion is a few hundred bytes (ES256) to a couple of KiB (RSA with x5c-less headers). */
export const MAX_CLIENT_ASSERTION_LENGTH = 8192

/** The mark kind under which the `jti` of every accepted assertion is kept until its `exp`. */
const JTI_MARK = 'client-assertion'

/** What checking an assertion needs besides the assertion and the client. */
export interface ClientAssertionCheck {
  tenant: string
  /** Accepted `aud` values: the issuer URL, the token endpoint, the endpoint called. */
  audiences: string[]
  /** Epoch milliseconds. */
  now: number
  keys: ClientKeys
  marks: MarkStore
}

function fail(description: string, cause?: unknown): OAuthError {
  return new OAuthError('invalid_client', description, { cause })
}

/**
 * Verifies a `private_key_jwt` client assertion of `client` and spends its `jti`: signed with
 * one of the client's keys by RS256, ES256 or PS256; `iss` and `sub` the client_id; `aud` one
 * of `audiences`; `exp` present and at most 5 minutes ahead; `nbf` and `iat` not in the future;
 * `jti` present and never seen before until `exp`, on any replica. Throws `invalid_client`
 * naming the rule broken (never a key), or `ClientKeysUnavailableError`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7523#section-3
 * @see https://openid.net/specs/openid-connect-core-1_0.html#ClientAuthentication
 */
export async function verifyClientAssertion(
  assertion: string,
  client: Client,
  check: ClientAssertionCheck,
): Promise<void> {
  if (assertion.length > MAX_CLIENT_ASSERTION_LENGTH) {
    throw fail(`client_assertion is longer than ${MAX_CLIENT_ASSERTION_LENGTH} characters`)
  }
  let payload: JWTPayload
  try {
    ;({ payload } = await jwtVerify(assertion, (header) => check.keys.resolve(client, header), {
      algorithms: [...CLIENT_ASSERTION_ALGORITHMS],
      audience: check.audiences,
      clockTolerance: CLIENT_ASSERTION_CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(check.now),
    }))
  } catch (error) {
    if (error instanceof ClientKeysUnavailableError) throw error
    throw fail(describeFailure(error), error)
  }
  const nowSeconds = check.now / 1000
  const tolerance = CLIENT_ASSERTION_CLOCK_TOLERANCE_SECONDS
  if (payload.iss !== payload.sub || payload.sub?.toLowerCase() !== client.clientId.toLowerCase()) {
    throw fail('client_assertion iss and sub must both be the client_id')
  }
  // RFC 7523 §3 item 4: exp is required; jose only checks it when present.
  if (payload.exp === undefined) throw fail('client_assertion must have an exp claim')
  if (payload.exp > nowSeconds + MAX_CLIENT_ASSERTION_LIFETIME_SECONDS + tolerance) {
    throw fail(
      `client_assertion exp must be at most ${MAX_CLIENT_ASSERTION_LIFETIME_SECONDS} seconds ahead`,
    )
  }
  if (payload.iat !== undefined && payload.iat > nowSeconds + tolerance) {
    throw fail('client_assertion iat is in the future')
  }
  const { jti } = payload
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) {
    throw fail('client_assertion must have a jti claim of 1 to 256 characters')
  }
  // Hashed: the jti is the client's text, and the mark store takes ids of bounded, well-formed
  // Unicode; with the client_id in it, two clients' jtis never collide.
  const id = sha256Hex(`${client.clientId.toLowerCase()}\n${jti}`)
  const until = Math.ceil((payload.exp + tolerance) * 1000)
  if (!(await check.marks.mark(check.tenant, JTI_MARK, id, until, check.now))) {
    throw fail('client_assertion was already used (its jti is spent)')
  }
}

/** A description of what is wrong with the assertion, safe to send: never key material. */
function describeFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'client_assertion has expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') {
      return 'client_assertion aud must be the issuer URL or the token endpoint URL'
    }
    if (error.claim === 'nbf') return 'client_assertion is not valid yet (nbf)'
    return `client_assertion ${error.claim} claim is invalid`
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return `client_assertion alg must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}`
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return 'no key of the client matches the client_assertion header (kid, alg)'
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return 'several keys of the client match the client_assertion; name one with kid'
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'client_assertion signature does not verify'
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return 'client_assertion is not a well-formed signed JWT'
  }
  return 'client_assertion could not be verified'
}
