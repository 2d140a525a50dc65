import * as z from 'zod'
import { JwksFetchError } from './fetch-jwks.js'

/**
 * The `kid` values this verifier looks up: what Tessera issues (`2026-11-22`, `2026-11-22.2`)
 * and what common issuers use. Anything else — a path, a URL, 10 kB of text, a number — is
 * refused before any lookup or fetch.
 */
export const KID_PATTERN: RegExp = /^[A-Za-z0-9._-]{1,128}$/

const BASE64URL = /^[A-Za-z0-9_-]+$/

// RFC 7517 §5: a JWK Set is an object with a `keys` array; other members are ignored.
const JwkSetSchema = z.object({ keys: z.array(z.unknown()) })

// Only RSA signature-verification keys of at least 2048 bits (342 base64url characters of
// modulus). `use`, `alg` and `key_ops`, when present, must allow RS256 verification (RFC 7517
// §4.2-4.4). Private members are never read: only kty, n and e reach jose.
const RsaVerificationKeySchema = z.object({
  kty: z.literal('RSA'),
  kid: z.string().regex(KID_PATTERN),
  use: z.literal('sig').optional(),
  alg: z.literal('RS256').optional(),
  key_ops: z
    .array(z.string())
    .refine((ops) => ops.includes('verify'))
    .optional(),
  n: z.string().regex(BASE64URL).min(342).max(2_800),
  e: z.string().regex(BASE64URL).max(12),
})

/** An RSA public key as published, reduced to what verification needs. */
export interface RsaPublicKey {
  kid: string
  n: string
  e: string
}

/**
 * Validates a JWK Set and keeps its RS256 verification keys. `oct` keys, other key types,
 * keys for other uses and malformed entries are skipped; a `kid` that appears twice is dropped
 * altogether, since nothing says which copy is right. A document that is not a JWK Set, or
 * whose keys are all unusable, throws: the last good set stays in use.
 */
export function parseJwks(document: unknown): { keys: RsaPublicKey[]; ignored: number } {
  const set = JwkSetSchema.safeParse(document)
  if (!set.success) throw new JwksFetchError('not a JWK Set')
  const byKid = new Map<string, RsaPublicKey | null>()
  let ignored = 0
  for (const entry of set.data.keys) {
    const parsed = RsaVerificationKeySchema.safeParse(entry)
    if (!parsed.success) {
      ignored += 1
      continue
    }
    const { kid, n, e } = parsed.data
    if (byKid.has(kid)) {
      // Count both copies once the second is seen: the first was counted as kept.
      ignored += byKid.get(kid) === null ? 1 : 2
      byKid.set(kid, null)
    } else {
      byKid.set(kid, { kid, n, e })
    }
  }
  const keys = [...byKid.values()].filter((key): key is RsaPublicKey => key !== null)
  if (keys.length === 0 && set.data.keys.length > 0) {
    throw new JwksFetchError('no usable RS256 key in the JWK Set')
  }
  return { keys, ignored }
}
