import * as z from 'zod'
import { KeyError } from '../errors.js'
import type { StoredKey } from '../ports.js'
import { KID_PATTERN } from './kid.js'

const Base64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'not base64url')

// RS256 keys below 2048 bits are refused by RFC 7518 §3.3 (and by jose at signing time, which
// would be too late: the key would already sit in the JWKS).
const MIN_MODULUS_BYTES = 256

/** The public half as stored and published: exactly `kty, n, e`. */
export const RsaPublicJwkSchema = z.object({
  kty: z.literal('RSA'),
  n: Base64url.refine(
    (n) => Buffer.from(n, 'base64url').length >= MIN_MODULUS_BYTES,
    'modulus shorter than 2048 bits',
  ),
  e: Base64url,
})
/** The parsed public half. */
export type RsaPublicJwkFields = z.infer<typeof RsaPublicJwkSchema>

/** The private half as stored: a full RSA private JWK with its CRT parameters. */
export const RsaPrivateJwkSchema = RsaPublicJwkSchema.extend({
  d: Base64url,
  p: Base64url,
  q: Base64url,
  dp: Base64url,
  dq: Base64url,
  qi: Base64url,
})
/** The parsed private half. */
export type RsaPrivateJwkFields = z.infer<typeof RsaPrivateJwkSchema>

const StoredKeySchema = z.object({
  tenant: z.string().min(1),
  kid: z.string().regex(KID_PATTERN, 'not a YYYY-MM-DD[.N] kid'),
  alg: z.literal('RS256'),
  publicJwk: z.string(),
  privateKey: z.string(),
  createdAt: z.int().nonnegative(),
  state: z.enum(['active', 'retired', 'revoked']),
  retiredAt: z.int().nonnegative().nullish(),
  signsFrom: z.int().nonnegative().nullish(),
})

function describeIssues(error: z.ZodError): string {
  // Paths and messages only: zod can quote the offending value, and that may be key material.
  return error.issues
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ')
}

function where(tenant: string, kid: unknown): string {
  return typeof kid === 'string'
    ? `key "${kid}" of tenant "${tenant}"`
    : `a key of tenant "${tenant}"`
}

/**
 * Re-parses what a KeyStore handed back. Adapters are a trust boundary: a corrupted row or an
 * adapter that leaks another tenant's keys must fail loudly here, not end up in a JWKS.
 */
export function parseStoredKeys(rows: readonly unknown[], tenant: string): StoredKey[] {
  return rows.map((row) => {
    const result = StoredKeySchema.safeParse(row)
    if (!result.success) {
      const kid = (row as { kid?: unknown } | null)?.kid
      throw new KeyError(
        'ERR_KEY_INVALID',
        `stored ${where(tenant, kid)} is invalid: ${describeIssues(result.error)}`,
      )
    }
    const { retiredAt, signsFrom, ...fields } = result.data
    const rest: StoredKey = signsFrom == null ? fields : { ...fields, signsFrom }
    if (rest.tenant !== tenant) {
      throw new KeyError(
        'ERR_KEY_INVALID',
        `the key store returned a key of tenant "${rest.tenant}" when asked for "${tenant}"`,
      )
    }
    return retiredAt == null ? rest : { ...rest, retiredAt }
  })
}

function parseJsonText<T>(text: string, schema: z.ZodType<T>, what: string, key: StoredKey): T {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new KeyError(
      'ERR_KEY_INVALID',
      `${what} of stored ${where(key.tenant, key.kid)} is not JSON`,
      {
        cause,
      },
    )
  }
  const result = schema.safeParse(value)
  if (!result.success) {
    throw new KeyError(
      'ERR_KEY_INVALID',
      `${what} of stored ${where(key.tenant, key.kid)} is invalid: ${describeIssues(result.error)}`,
    )
  }
  return result.data
}

/** The stored public JWK, reduced to `kty, n, e` whatever else the text held. */
export function parsePublicJwk(key: StoredKey): RsaPublicJwkFields {
  const { kty, n, e } = parseJsonText(key.publicJwk, RsaPublicJwkSchema, 'the public JWK', key)
  return { kty, n, e }
}

/** The stored private JWK; refuses one whose modulus or exponent differs from the public half. */
export function parsePrivateJwk(key: StoredKey): RsaPrivateJwkFields {
  const jwk = parseJsonText(key.privateKey, RsaPrivateJwkSchema, 'the private key', key)
  const pub = parsePublicJwk(key)
  // Halves that disagree would sign tokens that nobody can verify against the JWKS.
  if (jwk.n !== pub.n || jwk.e !== pub.e) {
    throw new KeyError(
      'ERR_KEY_INVALID',
      `the private and public halves of stored ${where(key.tenant, key.kid)} do not match`,
    )
  }
  const { kty, n, e, d, p, q, dp, dq, qi } = jwk
  return { kty, n, e, d, p, q, dp, dq, qi }
}
