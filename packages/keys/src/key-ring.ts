import type { JwksDocument } from './jwks.js'
import type { KeyStore, StoredKey } from './ports.js'
import type { SigningAlgorithm, TokenSigner } from './signer.js'
import { createKeyCipher, type KeyCipher } from './internal/key-cipher.js'
import { checkPrivateKeysOpen, type GenerateKey } from './internal/key-ops.js'
import { checkOptions } from './internal/ring-options.js'
import { parseStoredKeys } from './internal/stored-key.js'
import { TenantKeyRing } from './internal/tenant-key-ring.js'

/**
 * Why a ring makes a key: its first (or a replacement after a revocation left none), a restart
 * on a later date (KEY_ROTATE_ON_RESTART), or the active key's age (KEY_ROTATION_DAYS).
 */
export type KeyMakeReason = 'first' | 'restart' | 'age'

/** What a ring reports through {@link LoadKeyRingOptions.onEvent}; never key material. */
export type KeyRingEvent =
  | {
      type: 'key-made'
      tenant: string
      reason: KeyMakeReason
      /** The new active key: made here, or by another process that won the race. */
      kid: string
      /** The key it replaced as the signer, if any. */
      previousKid: string | undefined
    }
  | {
      type: 'key-make-failed'
      tenant: string
      reason: KeyMakeReason
      /** A KeyError or a store error: names tenants and kids, never key material. */
      error: unknown
    }

/** Options of {@link loadKeyRing}. */
export interface LoadKeyRingOptions {
  /** Tenant name; keys are stored and published per tenant. */
  tenant: string
  /**
   * The tenant's `jwt_algorithm`. An HS256 ring only publishes keys left from RS256 days, unless
   * `idTokens` is set.
   */
  algorithm: SigningAlgorithm
  /**
   * The tenant has OpenID Connect clients: keep an active RS256 key even when its access tokens
   * are HS256, since ID tokens are always RS256. An HS256 ring with `idTokens` treats that key
   * exactly as an RS256 ring treats its own (made on first use, same kid rule, restart and age
   * rotation, grace, pruning, encryption), publishes it, and {@link KeyRing.signer} answers its
   * signer; {@link KeyRing.rs256Since} stays undefined, as the access tokens are still HS256.
   * Omitted or false: an HS256 ring keeps no active key.
   *
   * A switch between HS256 with `idTokens` and RS256, either way, keeps the active key: it goes
   * on signing (then access tokens too, or then ID tokens only) and no key is made or retired.
   * After a switch to RS256, `rs256Since` is therefore the creation of that key (or of the
   * oldest key of its rotation chain), not the time of the switch; the time of the switch is the
   * tenant's algorithm record's (see `recordTenantAlgorithms`).
   */
  idTokens?: boolean
  /** Where the key pairs live. */
  store: KeyStore
  /**
   * The tenant's stored keys, as the caller read them (with {@link KeyStore.listKeysOfTenants},
   * one query for every tenant of a start). Omitted: the load reads them itself.
   */
  keys?: readonly StoredKey[]
  /**
   * The caller checked `keys` with {@link verifyStoredKeys} and this `encryptionSecret` just
   * before: the load does not open them a second time.
   */
  keysVerified?: boolean
  /** Clock, epoch milliseconds. */
  now: () => number
  /**
   * KEY_ROTATE_ON_RESTART: a load on a later UTC date than the active key's makes a new key, in
   * the background.
   */
  rotateOnRestart: boolean
  /** JWKS_GRACE_HOURS in milliseconds: how long a retired key stays published. */
  graceMs: number
  /**
   * KEY_ROTATION_DAYS in milliseconds: once the active key is this old, a new one is made in the
   * background (noticed by a load, a reload or {@link KeyRing.maintain}). Omitted: keys never
   * rotate by age.
   */
  rotationMs?: number
  /**
   * KEY_ENCRYPTION_SECRET, at least 32 random characters: new private keys are stored as
   * AES-256-GCM envelopes, and a load encrypts keys stored in plaintext before it was set.
   * Omitted: private keys are stored as plaintext JWK JSON.
   */
  encryptionSecret?: string
  /**
   * Told of every key the ring makes or adopts, and of every failed attempt (retried at the next
   * need: the next signature or JWKS for a first key, the next {@link KeyRing.maintain} for a
   * rotation). For logs; it must not throw.
   */
  onEvent?: (event: KeyRingEvent) => void
  /**
   * Aborted when the ring's owner shuts down: no key is made or written after it, and a
   * generation still waiting for its turn leaves the queue.
   */
  signal?: AbortSignal
  /**
   * Makes an RSA key pair; {@link generateRsaKey} by default. Whatever it is, it runs under the
   * process-wide limit of two generations at once.
   */
  generateKey?: GenerateKey
  /**
   * KEY_PUBLISH_AHEAD_SECONDS in milliseconds: a key made while another signs (restart, age) is
   * published at once and signs this long after its creation; until then the other key signs.
   * A first key, and the replacement of a revoked key, sign at once. Omitted: 0.
   */
  publishAheadMs?: number
  /**
   * The tenant's access tokens switch from HS256 to this ring's keys: a ring without an active
   * key makes its first one at load, in the background, and publishes it `publishAheadMs`
   * before its `signsFrom`. The caller keeps signing access tokens with HS256 until then.
   */
  firstKeyAhead?: boolean
}

/**
 * The keys of one tenant: the signing key and the published JWKS, both computed once per load or
 * reload, so serving them costs nothing per request.
 *
 * A ring that keeps a key (RS256, or HS256 with `idTokens`) but has none yet makes its first one
 * when first needed: by a signature of its {@link KeyRing.signer}, or by
 * {@link KeyRing.ensureKey} (the JWKS route). Rotations are made in the background while the
 * previous key goes on signing.
 */
export interface KeyRing {
  /** Tenant name. */
  readonly tenant: string
  /** The algorithm the tenant signs with. */
  readonly algorithm: SigningAlgorithm
  /**
   * The kid of the key that signs new tokens (at an HS256 tenant with `idTokens`, its ID tokens);
   * undefined for an HS256 tenant without `idTokens`, and before a ring's first key is made.
   */
  activeKid(): string | undefined
  /**
   * The key published ahead of signing: made while another key signs, it takes over at its
   * `signsFrom` (epoch milliseconds) without waiting for a reload. Undefined when there is none.
   */
  nextKey(): { kid: string; signsFrom: number } | undefined
  /**
   * When the active key starts signing access tokens (epoch milliseconds): its creation, or
   * later for the first key of a tenant switched from HS256 ({@link LoadKeyRingOptions.firstKeyAhead}),
   * which signs ID tokens at once but is published ahead for access tokens.
   */
  activeSignsFrom(): number | undefined
  /**
   * When the tenant's current RS256 period began (epoch milliseconds), derived from the stored
   * keys' creation and retirement times, so every replica and restart finds the same answer:
   * the creation of the oldest key of the unbroken chain of rotations that leads to the active
   * key. A switch from HS256 starts a period; a rollback to HS256 ends one. Undefined for an
   * HS256 tenant, and for an RS256 tenant before its first key. It cannot tell whether the
   * tenant signed HS256 before this period: which HS256 tokens an RS256 tenant takes is decided
   * by its algorithm record (`recordTenantAlgorithms`), not by this.
   */
  rs256Since(): number | undefined
  /**
   * The tenant's public keys: the active key and retired keys within the grace. Frozen; the same
   * object until a reload changes what is published. Empty before the first key: serve it after
   * {@link KeyRing.ensureKey}.
   */
  jwks(): JwksDocument
  /**
   * Resolves once the ring has its active key: at once when it has one or keeps none (HS256
   * without `idTokens`); otherwise the key is made (or another process's adopted), once however
   * many callers wait, and inserted if absent so that replicas agree. A failure rejects every
   * caller that waited and is retried by the next call.
   *
   * @throws KeyError `ERR_KEY_CONFLICT` when the inserts kept losing; store errors
   */
  ensureKey(): Promise<void>
  /**
   * The RS256 signer of the ring. It is one stable object that always signs with the ring's
   * current active key: take it once, and after a rotation or reload new tokens carry the new
   * kid at once. Its first signature at a ring without a key awaits {@link KeyRing.ensureKey}.
   * At an HS256 tenant with `idTokens` it signs ID tokens only.
   *
   * @throws KeyError `ERR_NO_ACTIVE_KEY` for an HS256 tenant without `idTokens`, whose signer is
   * {@link createHs256Signer} over the shared secret
   */
  signer(): TokenSigner
  /**
   * Re-reads the store: picks up keys made, rotated or revoked by another process (`tessera
   * keys`, other replicas), retires and prunes. Makes nothing itself: when the active key is due
   * to rotate by age, or a revocation left a ring that had keys without an active one, the new
   * key is made in the background. Concurrent calls share one read. On failure the ring keeps
   * serving what it had.
   */
  reload(): Promise<void>
  /**
   * What time alone changes, from what the ring already knows, without a store query: starts a
   * background rotation when one is due (by age, or a restart's that failed), and reloads when a
   * retired key's grace has ended (to unpublish and prune it). Meant for a short poll; resolves
   * once what it started is done. Never rejects: failures go to `onEvent` or wait for the next
   * poll.
   */
  maintain(): Promise<void>
  /** Resolves once no reload and no key making of this ring is under way. */
  idle(): Promise<void>
}

/**
 * Loads the key ring of one tenant: reads its keys, retires and prunes as needed. A load never
 * generates a key, so that an issuer listens at once however many tenants it serves.
 *
 * - RS256: the newest active key signs. With none, the first key (named for the UTC date) is
 *   made when first needed ({@link KeyRing.ensureKey}, or a signature). With `rotateOnRestart`
 *   and an active key from an earlier date, or with `rotationMs` and an active key at least that
 *   old, a new key is made in the background and the old one signs until the new one is stored;
 *   then the old one is retired. A same-day restart reuses the stored key, so the kid and the
 *   JWKS stay put.
 * - HS256 with `idTokens`: the same as RS256, for the key that signs ID tokens.
 * - HS256 without: no key is made; keys still active from RS256 days are retired, so tokens
 *   they signed keep verifying for the grace.
 * - Both: retired keys past the grace are deleted; revoked keys are never published. With
 *   `encryptionSecret`, keys stored in plaintext are encrypted in place.
 *
 * Every private key is decrypted and the published keys are parsed before anything is written,
 * so a wrong secret or a corrupted key fails the load and leaves the store as it was. Making a
 * key is insert-if-absent on (tenant, kid): processes that race converge on the one key that won
 * the insert. Generation is asynchronous (the thread pool) and at most two run at once in the
 * process, first keys (a request waits) before rotations.
 *
 * @throws KeyError `ERR_KEY_DECRYPT` when a stored private key does not decrypt with
 * `encryptionSecret` (or is encrypted and no secret is given); `ERR_KEY_INVALID` when a stored
 * key is corrupted; `ERR_SECRET_TOO_SHORT` for an encryption secret under 32 characters
 * @example
 * ```ts
 * const ring = await loadKeyRing({
 *   tenant: 'acme',
 *   algorithm: 'RS256',
 *   store: store.keys,
 *   now: Date.now,
 *   rotateOnRestart: true,
 *   graceMs: 4 * 3_600_000,
 *   rotationMs: 90 * 86_400_000,
 *   encryptionSecret: process.env.KEY_ENCRYPTION_SECRET,
 * })
 * const signer = ring.signer() // follows rotations: take it once
 * await ring.ensureKey() // before serving ring.jwks()
 * setInterval(() => void ring.maintain(), 5_000).unref() // and ring.reload() when the store says
 * ```
 */
export async function loadKeyRing(options: LoadKeyRingOptions): Promise<KeyRing> {
  checkOptions(options)
  // The stored keys are read once, at load: the ring keeps what it needs of them, not the rows.
  const { keys, keysVerified, ...kept } = options
  const ring = new TenantKeyRing(kept, cipherOf(options.encryptionSecret))
  await ring.load(keys, keysVerified === true)
  return ring
}

// The rings of one process share one secret: one cipher (and one copy of its key material) for
// all of them, not one per tenant.
let sharedCipher: { secret: string | undefined; cipher: KeyCipher } | undefined
function cipherOf(secret: string | undefined): KeyCipher {
  if (sharedCipher === undefined || sharedCipher.secret !== secret) {
    sharedCipher = { secret, cipher: createKeyCipher(secret) }
  }
  return sharedCipher.cipher
}

/** Options of {@link verifyStoredKeys}. */
export interface VerifyStoredKeysOptions {
  /** Tenant name. */
  tenant: string
  /** Where the key pairs live. */
  store: KeyStore
  /** KEY_ENCRYPTION_SECRET, as given to {@link loadKeyRing}. */
  encryptionSecret?: string
  /** The tenant's stored keys, as the caller read them; omitted: read here. */
  keys?: readonly StoredKey[]
}

/**
 * Checks, changing nothing, that every stored key of a tenant parses and that its private key
 * decrypts with `encryptionSecret`. Run it for every tenant before loading any ring: a load
 * writes (it encrypts plaintext keys, rotates, prunes), and a secret that is wrong for one tenant
 * must stop the start before another tenant's keys were touched.
 *
 * @throws KeyError `ERR_KEY_DECRYPT` naming the tenant, `ERR_KEY_INVALID`, `ERR_SECRET_TOO_SHORT`
 * @example
 * ```ts
 * for (const tenant of tenants) await verifyStoredKeys({ tenant: tenant.name, store, encryptionSecret })
 * ```
 */
export async function verifyStoredKeys(options: VerifyStoredKeysOptions): Promise<void> {
  const cipher = createKeyCipher(options.encryptionSecret)
  const keys = parseStoredKeys(
    options.keys ?? (await options.store.listKeys(options.tenant)),
    options.tenant,
  )
  checkPrivateKeysOpen(keys, cipher)
}
