import { KeyError } from './errors.js'
import type { KeyState, KeyStore } from './ports.js'
import type { SigningAlgorithm } from './signer.js'
import { createKeyCipher } from './internal/key-cipher.js'
import { checkPrivateKeysOpen, createActiveKey, readTenantKeys } from './internal/key-ops.js'
import { signingState, signsFrom } from './internal/publish-ahead.js'

/** Options of {@link rotateKey}. */
export interface RotateKeyOptions {
  /** Tenant name. */
  tenant: string
  /** Where the key pairs live. */
  store: KeyStore
  /** Clock, epoch milliseconds. */
  now: () => number
  /** KEY_ENCRYPTION_SECRET: the new private key is sealed with it, as a running issuer would. */
  encryptionSecret?: string
  /**
   * KEY_PUBLISH_AHEAD_SECONDS in milliseconds: while another key signs, the new key is published
   * at once and signs only this long after its creation, and the running issuers retire the old
   * key then. 0 or omitted: it signs at once and the old key is retired now (`--now`).
   */
  publishAheadMs?: number
}

/** What {@link rotateKey} did. */
export interface RotateKeyResult {
  /** The kid of the new active key. */
  kid: string
  /** Epoch milliseconds from which it signs. */
  signsFrom: number
  /** The kids it retired: they stay published for the grace. Empty when published ahead. */
  retired: string[]
}

function checkTenant(fn: string, tenant: unknown, store: unknown, now: unknown): void {
  if (typeof tenant !== 'string' || tenant === '') {
    throw new TypeError(`${fn}: options.tenant must be a non-empty string`)
  }
  if (typeof store !== 'object' || store === null) {
    throw new TypeError(`${fn}: options.store must be a KeyStore`)
  }
  if (typeof now !== 'function') throw new TypeError(`${fn}: options.now must be a function`)
}

/**
 * Rotates a tenant's RS256 key (`tessera keys rotate`): makes a new active key. With
 * `publishAheadMs` and a key signing, the new key is published at once and signs from its
 * stored `signsFrom`; running issuers switch to it at that instant and retire the old one.
 * Otherwise it signs at once and the previous active key(s) are retired with `retiredAt` = now;
 * either way a retired key stays in the JWKS for the grace.
 *
 * The kid is today's UTC date, or `YYYY-MM-DD.N` one past the highest of that date the tenant
 * has ever had, pruned keys included: a kid is never reused. The insert is
 * insert-if-absent, so rotations racing in several processes converge on one key. Running
 * issuers pick the new key up on their next {@link KeyRing.reload}. Revoking the signing key
(see {@link revokeKey}) makes a key published ahead sign at once.
 *
 * Every stored private key is decrypted first: a wrong `encryptionSecret` changes nothing.
 *
 * @throws KeyError `ERR_KEY_DECRYPT`, `ERR_KEY_INVALID`, `ERR_KEY_CONFLICT`
 * @example
 * ```ts
 * const { kid, retired } = await rotateKey({ tenant: 'acme', store: store.keys, now: Date.now })
 * ```
 */
export async function rotateKey(options: RotateKeyOptions): Promise<RotateKeyResult> {
  const { tenant, store, now } = options
  checkTenant('rotateKey', tenant, store, now)
  const cipher = createKeyCipher(options.encryptionSecret)
  const current = await readTenantKeys(store, tenant)
  checkPrivateKeysOpen(current.keys, cipher)

  const at = now()
  const aheadMs = options.publishAheadMs ?? 0
  if (!(Number.isFinite(aheadMs) && aheadMs >= 0)) {
    throw new TypeError('rotateKey: options.publishAheadMs must be a non-negative number')
  }
  // Published ahead only while another key signs: a tenant without one has nothing to keep.
  const ahead = signingState(current.keys, at).signing === undefined ? 0 : aheadMs
  const made = await createActiveKey(store, tenant, cipher, current, at, undefined, ahead)
  const { active, keys } = made
  const result = { kid: active.kid, signsFrom: signsFrom(active) }
  // The old key goes on signing until the new one takes over; the issuers retire it then.
  if (signsFrom(active) > at) return { ...result, retired: [] }
  const retired: string[] = []
  for (const key of keys) {
    if (key.state !== 'active' || key.kid === active.kid) continue
    if (await store.retireKey(tenant, key.kid, at)) retired.push(key.kid)
  }
  return { ...result, retired }
}

/** Options of {@link revokeKey}. */
export interface RevokeKeyOptions {
  /** Tenant name. */
  tenant: string
  /** The kid to revoke. */
  kid: string
  /** The tenant's `jwt_algorithm`: an RS256 tenant whose active key is revoked gets a new one. */
  algorithm: SigningAlgorithm
  /**
   * The tenant has OpenID Connect clients (`idTokens` of `loadKeyRing`): an HS256
   * tenant whose active key is revoked gets a new one too, for its ID tokens.
   */
  idTokens?: boolean
  /** Where the key pairs live. */
  store: KeyStore
  /** Clock, epoch milliseconds. */
  now: () => number
  /** KEY_ENCRYPTION_SECRET: a replacement key is sealed with it. */
  encryptionSecret?: string
}

/** What {@link revokeKey} did. */
export interface RevokeKeyResult {
  /** The revoked kid. */
  kid: string
  /** Its state before; `revoked` means it already was and nothing changed. */
  previousState: KeyState
  /** The kid of the active key made to replace it, when it was the active key. */
  newActiveKid?: string
}

/**
 * Revokes a key (`tessera keys revoke`, for a compromised key): it leaves the JWKS at once and
 * never signs again; issuers drop it on their next {@link KeyRing.reload}, and verifiers refuse
 * its tokens once they refetch the JWKS. When it was the active key of an RS256 tenant (or of an
 * HS256 tenant with `idTokens`) and no other active key is left, a new active key is made (as
 * {@link rotateKey} would).
 *
 * Revoking a revoked key changes nothing. Revoked keys stay stored, unpublished, so their kid is
 * never reused and `tessera keys list` can still show them.
 *
 * @throws KeyError `ERR_KEY_NOT_FOUND` for a kid the tenant does not have; `ERR_KEY_DECRYPT`
 * (before anything changes) when a replacement is needed and the secret is wrong
 * @example
 * ```ts
 * const result = await revokeKey({ tenant: 'acme', kid: '2025-03-10', algorithm: 'RS256',
 *   store: store.keys, now: Date.now })
 * result.newActiveKid // '2025-03-10.2'
 * ```
 */
export async function revokeKey(options: RevokeKeyOptions): Promise<RevokeKeyResult> {
  const { tenant, kid, algorithm, store, now } = options
  checkTenant('revokeKey', tenant, store, now)
  if (typeof kid !== 'string' || kid === '') {
    throw new TypeError('revokeKey: options.kid must be a non-empty string')
  }
  const cipher = createKeyCipher(options.encryptionSecret)
  const current = await readTenantKeys(store, tenant)
  const key = current.keys.find((candidate) => candidate.kid === kid)
  if (key === undefined) {
    throw new KeyError('ERR_KEY_NOT_FOUND', `tenant "${tenant}" has no key "${kid}"`)
  }
  if (key.state === 'revoked') return { kid, previousState: 'revoked' }

  const replace =
    (algorithm === 'RS256' || options.idTokens === true) &&
    key.state === 'active' &&
    !current.keys.some((other) => other.state === 'active' && other.kid !== kid)
  // The replacement is sealed with this secret: prove it opens the stored keys before the
  // revocation, so that a wrong secret changes nothing at all.
  if (replace) checkPrivateKeysOpen(current.keys, cipher)

  const at = now()
  // Revoke first: the key must leave the JWKS even if making its replacement then fails (a
  // running RS256 issuer makes one itself on its next reload when no key is active).
  await store.updateKeyState(tenant, kid, 'revoked', key.retiredAt ?? at)
  if (!replace) return { kid, previousState: key.state }
  const revoked = {
    ...current,
    keys: current.keys.map((k) => (k === key ? { ...k, state: 'revoked' as const } : k)),
  }
  const { active } = await createActiveKey(store, tenant, cipher, revoked, at)
  return { kid, previousState: key.state, newActiveKid: active.kid }
}
