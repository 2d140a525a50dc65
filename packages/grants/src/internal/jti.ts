/**
 * The `jti` of an access token issued from a refresh family (code and refresh grants) is
 * `<familyId>.<random id>`: still an opaque unique identifier to everyone else (RFC 7519 §4.1.7),
 * but it lets introspection find the family, and its revocation, without a write per token.
 * Family ids are random ids, which never contain a dot; a password or client_credentials jti
 * has no dot at all.
 */
export function familyJti(familyId: string, randomId: string): string {
  return `${familyId}.${randomId}`
}

/** The family an access token's `jti` names, or undefined for a token issued without one. */
export function familyIdOfJti(jti: string): string | undefined {
  const dot = jti.indexOf('.')
  return dot > 0 ? jti.slice(0, dot) : undefined
}

// What the ids of deps.randomId look like (UUIDs in the issuer), one or two of them. Anything
// else was not issued here, and is never handed to the store, whose ids are bounded.
const ISSUED_JTI = /^[\w-]{1,128}(?:\.[\w-]{1,128})?$/

/** Whether `jti` has the shape of one Tessera issues; false for a missing or foreign one. */
export function isIssuedJti(jti: unknown): jti is string {
  return typeof jti === 'string' && ISSUED_JTI.test(jti)
}

/**
 * Whether `exp` is one Tessera writes: whole seconds (iat plus the lifetime) that stay an exact
 * integer in milliseconds, the unit of the store. A larger or fractional one was signed by
 * someone else holding an HS256 secret, and is never handed to the store.
 */
export function isIssuedExp(exp: unknown): exp is number {
  return typeof exp === 'number' && Number.isSafeInteger(exp * 1000) && Number.isInteger(exp)
}
