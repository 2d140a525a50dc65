import type { StoredKey } from './ports.js'
import { compareKids } from './internal/kid.js'
import { retiredSince } from './internal/lifecycle.js'
import { parsePublicJwk } from './internal/stored-key.js'

/** One published RS256 verification key: public parameters only. */
export interface RsaPublicJwk {
  readonly kty: 'RSA'
  readonly n: string
  readonly e: string
  readonly kid: string
  readonly alg: 'RS256'
  readonly use: 'sig'
}

/** The body of `/.well-known/jwks.json`. */
export interface JwksDocument {
  readonly keys: readonly RsaPublicJwk[]
}

/** Options of {@link createJwks} and {@link isPublished}. */
export interface PublicationOptions {
  /** Epoch milliseconds. */
  now: number
  /** How long a retired key stays published, in milliseconds (JWKS_GRACE_HOURS). */
  graceMs: number
}

/**
 * Whether a stored key belongs in the JWKS at `now`: active keys, and retired keys for `graceMs`
 * after they stopped signing, so that tokens they signed verify until they expire. Revoked keys
 * never.
 */
export function isPublished(key: StoredKey, { now, graceMs }: PublicationOptions): boolean {
  if (key.state === 'active') return true
  if (key.state === 'retired') return retiredSince(key) + graceMs > now
  return false
}

// The document of every ring without keys (most HS256 tenants): one frozen object for all.
const EMPTY_JWKS: JwksDocument = Object.freeze({ keys: Object.freeze([]) })

/**
 * Builds the JWKS document from a tenant's stored keys: the active key first, then retired keys
 * newest first. Only `kty, n, e, kid, alg, use` are copied, so no private or symmetric material
 * can leak whatever the stored text holds.
 *
 * @throws KeyError `ERR_KEY_INVALID` when a published key's stored JWK does not parse
 * @see RFC 7517 §5 (JWK Set format)
 * @example
 * ```ts
 * const doc = createJwks(await store.listKeys('acme'), { now: Date.now(), graceMs })
 * ```
 */
export function createJwks(keys: readonly StoredKey[], options: PublicationOptions): JwksDocument {
  if (keys.length === 0) return EMPTY_JWKS
  const published = keys
    .filter((key) => isPublished(key, options))
    .sort((a, b) => {
      if (a.state !== b.state) return a.state === 'active' ? -1 : 1
      return b.createdAt - a.createdAt || compareKids(b.kid, a.kid)
    })
    .map((key): RsaPublicJwk => {
      const { kty, n, e } = parsePublicJwk(key)
      return Object.freeze({ kty, n, e, kid: key.kid, alg: 'RS256', use: 'sig' })
    })
  return Object.freeze({ keys: Object.freeze(published) })
}
