import { KeyError } from './errors.js'
import { createJwks, type JwksDocument } from './jwks.js'
import { kidForDate } from './kid.js'
import type { KeyStore, StoredKey } from './ports.js'
import type { SignedToken, SigningAlgorithm, TokenSigner } from './signer.js'
import { createKeyCipher, isSealed, type KeyCipher } from './internal/envelope.js'
import {
  checkPrivateKeysOpen,
  createActiveKey,
  readTenantKeys,
  type TenantKeys,
} from './internal/key-ops.js'
import { kidDate } from './internal/kid.js'
import { isPastGrace, newestActive, rs256PeriodStart } from './internal/lifecycle.js'
import { createRs256Signer } from './internal/rs256-signer.js'
import { parsePrivateJwk } from './internal/stored-key.js'

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
   * exactly as an RS256 ring treats its own (created on load when absent, same kid rule, restart
   * and age rotation, grace, pruning, encryption), publishes it, and {@link KeyRing.signer}
   * answers its signer; {@link KeyRing.rs256Since} stays undefined, as the access tokens are
   * still HS256. Omitted or false: an HS256 ring keeps no active key.
   *
   * A switch between HS256 with `idTokens` and RS256, either way, keeps the active key: it goes
   * on signing (then access tokens too, or then ID tokens only) and no key is made or retired.
   * After a switch to RS256, `rs256Since` is therefore the creation of that key (or of the
   * oldest key of its rotation chain), not the time of the switch: HS256 access tokens issued
   * while the key already signed ID tokens are not taken by {@link createAccessTokenVerifier}.
   */
  idTokens?: boolean
  /** Where the key pairs live. */
  store: KeyStore
  /** Clock, epoch milliseconds. */
  now: () => number
  /** KEY_ROTATE_ON_RESTART: a load on a later UTC date than the active key's makes a new key. */
  rotateOnRestart: boolean
  /** JWKS_GRACE_HOURS in milliseconds: how long a retired key stays published. */
  graceMs: number
  /**
   * KEY_ROTATION_DAYS in milliseconds: a load or {@link KeyRing.reload} that finds the active key
   * at least this old makes a new one. Omitted: keys never rotate by age.
   */
  rotationMs?: number
  /**
   * KEY_ENCRYPTION_SECRET, at least 32 random characters: new private keys are stored as
   * AES-256-GCM envelopes, and a load encrypts keys stored in plaintext before it was set.
   * Omitted: private keys are stored as plaintext JWK JSON.
   */
  encryptionSecret?: string
}

/**
 * The keys of one tenant: the signing key and the published JWKS, both computed once per load or
 * reload, so serving them costs nothing per request.
 */
export interface KeyRing {
  /** Tenant name. */
  readonly tenant: string
  /** The algorithm the tenant signs with. */
  readonly algorithm: SigningAlgorithm
  /**
   * The kid of the key that signs new tokens (at an HS256 tenant with `idTokens`, its ID tokens);
   * undefined for an HS256 tenant without `idTokens`.
   */
  activeKid(): string | undefined
  /**
   * When the tenant's current RS256 period began (epoch milliseconds), derived from the stored
   * keys' creation and retirement times, so every replica and restart finds the same answer:
   * the creation of the oldest key of the unbroken chain of rotations that leads to the active
   * key. A switch from HS256 starts a period; a rollback to HS256 ends one. Undefined for an
   * HS256 tenant.
   */
  rs256Since(): number | undefined
  /**
   * The tenant's public keys: the active key and retired keys within the grace. Frozen; the same
   * object until a reload changes what is published.
   */
  jwks(): JwksDocument
  /**
   * The RS256 signer of the ring. It is one stable object that always signs with the ring's
   * current active key: take it once, and after a rotation or reload new tokens carry the new
   * kid at once. At an HS256 tenant with `idTokens` it signs ID tokens only.
   *
   * @throws KeyError `ERR_NO_ACTIVE_KEY` for an HS256 tenant without `idTokens`, whose signer is
   * {@link createHs256Signer} over the shared secret
   */
  signer(): TokenSigner
  /**
   * Re-reads the store: picks up keys rotated or revoked by another process (`tessera keys`,
   * other replicas) and applies the rules of {@link loadKeyRing} but the restart rotation:
   * rotates an RS256 key older than `rotationMs`, makes a key when an RS256 ring (or an HS256
   * ring with `idTokens`) has no active one left (after a revocation), retires and prunes. Meant to be called on a short poll.
   * Concurrent calls share one read. On failure the ring keeps serving what it had.
   */
  reload(): Promise<void>
}

interface Snapshot {
  activeKid: string | undefined
  rs256Since: number | undefined
  jwks: JwksDocument
  signer: TokenSigner | undefined
}

function checkOptions(options: LoadKeyRingOptions): void {
  const { tenant, algorithm, store, now, rotateOnRestart, graceMs, rotationMs, idTokens } = options
  if (typeof tenant !== 'string' || tenant === '') {
    throw new TypeError('loadKeyRing: options.tenant must be a non-empty string')
  }
  if (algorithm !== 'HS256' && algorithm !== 'RS256') {
    throw new TypeError('loadKeyRing: options.algorithm must be "HS256" or "RS256"')
  }
  if (typeof store !== 'object' || store === null) {
    throw new TypeError('loadKeyRing: options.store must be a KeyStore')
  }
  if (typeof now !== 'function') throw new TypeError('loadKeyRing: options.now must be a function')
  if (typeof rotateOnRestart !== 'boolean') {
    throw new TypeError('loadKeyRing: options.rotateOnRestart must be a boolean')
  }
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new TypeError(
      'loadKeyRing: options.graceMs must be a non-negative number of milliseconds',
    )
  }
  if (rotationMs !== undefined && !(Number.isFinite(rotationMs) && rotationMs > 0)) {
    throw new TypeError('loadKeyRing: options.rotationMs must be a positive number of milliseconds')
  }
  if (idTokens !== undefined && typeof idTokens !== 'boolean') {
    throw new TypeError('loadKeyRing: options.idTokens must be a boolean')
  }
}

/**
 * Loads the key ring of one tenant, creating, rotating, retiring and pruning keys as needed.
 *
 * - RS256: the newest active key signs. With none, a key for today's UTC date is created; with
 *   `rotateOnRestart` and an active key from an earlier date, or with `rotationMs` and an active
 *   key at least that old, a new one replaces it and the old one is retired. A same-day restart
 *   reuses the stored key, so the kid and the JWKS stay put.
 * - HS256 with `idTokens`: the same as RS256, for the key that signs ID tokens.
 * - HS256 without: no key is created; keys still active from RS256 days are retired, so tokens
 *   they signed keep verifying for the grace.
 * - Both: retired keys past the grace are deleted; revoked keys are never published. With
 *   `encryptionSecret`, keys stored in plaintext are encrypted in place.
 *
 * Every private key is decrypted and the published keys are parsed before anything is written,
 * so a wrong secret or a corrupted key fails the load and leaves the store as it was. Creation is
 * insert-if-absent on (tenant, kid): processes that start together converge on the one key that
 * won the insert.
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
 * setInterval(() => void ring.reload(), 5_000).unref()
 * ```
 */
export async function loadKeyRing(options: LoadKeyRingOptions): Promise<KeyRing> {
  checkOptions(options)
  const ring = new TenantKeyRing({ ...options }, createKeyCipher(options.encryptionSecret))
  await ring.refresh('load')
  return ring
}

class TenantKeyRing implements KeyRing {
  readonly tenant: string
  readonly algorithm: SigningAlgorithm
  /** Whether the ring keeps an active RS256 key: RS256 access tokens, or ID tokens. */
  readonly #keepsKey: boolean
  readonly #options: LoadKeyRingOptions
  readonly #cipher: KeyCipher
  readonly #signers = new Map<string, TokenSigner>()
  #stableSigner: TokenSigner | undefined
  #snapshot: Snapshot | undefined
  #pending: Promise<void> | undefined

  constructor(options: LoadKeyRingOptions, cipher: KeyCipher) {
    this.tenant = options.tenant
    this.algorithm = options.algorithm
    this.#keepsKey = options.algorithm === 'RS256' || options.idTokens === true
    this.#options = options
    this.#cipher = cipher
  }

  activeKid(): string | undefined {
    return this.#current().activeKid
  }

  rs256Since(): number | undefined {
    return this.#current().rs256Since
  }

  jwks(): JwksDocument {
    return this.#current().jwks
  }

  signer(): TokenSigner {
    if (this.#current().signer === undefined) {
      throw new KeyError(
        'ERR_NO_ACTIVE_KEY',
        `tenant "${this.tenant}" signs with ${this.algorithm} and has no OpenID Connect clients; ` +
          'its key ring holds no signing key',
      )
    }
    // One object for the ring's life that looks the active key up per token: callers that took
    // it once (the grant context) sign with a rotated key as soon as a reload switched to it.
    this.#stableSigner ??= {
      alg: 'RS256',
      sign: (claims): Promise<SignedToken> => {
        const { signer } = this.#current()
        if (signer === undefined)
          throw new Error('unreachable: a ring that keeps a key has a signer')
        return signer.sign(claims)
      },
    }
    return this.#stableSigner
  }

  reload(): Promise<void> {
    this.#pending ??= this.refresh('reload').finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  async refresh(mode: 'load' | 'reload'): Promise<void> {
    const { tenant, algorithm, store, graceMs } = this.#options
    const keepsKey = this.#keepsKey
    const now = this.#options.now()
    const current = await readTenantKeys(store, tenant)

    // Check everything that can fail before the first write, so that a wrong secret or a
    // corrupted key fails the load without having encrypted, created, retired or deleted a key.
    // A load opens every private key: that is what proves the secret before `start` listens.
    if (mode === 'load') checkPrivateKeysOpen(current.keys, this.#cipher)
    createJwks(current.keys, { now, graceMs })
    let active = keepsKey ? newestActive(current.keys) : undefined
    if (active !== undefined) await this.#signerFor(active)

    if (mode === 'load' && this.#cipher.encrypts) await this.#encryptPlaintext(current)

    let keys = current.keys
    if (keepsKey && this.#rotationDue(active, mode, now)) {
      ;({ active, keys } = await createActiveKey(store, tenant, this.#cipher, current, now))
    }

    const retire = keys.filter((key) => key.state === 'active' && key.kid !== active?.kid)
    const lost: string[] = []
    for (const key of retire) {
      if (!(await store.retireKey(tenant, key.kid, now))) lost.push(key.kid)
    }
    // A lost retirement means the key stopped being active since the read: another replica
    // retired it (keep publishing it, with that replica's time) or someone revoked it (never
    // publish it). Only the store knows which.
    const fresh = lost.length === 0 ? [] : (await readTenantKeys(store, tenant)).keys
    const after = keys.flatMap((key): StoredKey[] => {
      if (!retire.includes(key)) return [key]
      if (!lost.includes(key.kid)) return [{ ...key, state: 'retired', retiredAt: now }]
      const stored = fresh.find((candidate) => candidate.kid === key.kid)
      return stored === undefined || stored.state === 'active' ? [] : [stored]
    })
    const prune = after.filter((key) => isPastGrace(key, now, graceMs))
    for (const key of prune) await store.deleteKey(tenant, key.kid)
    const kept = after.filter((key) => !prune.includes(key))

    const jwks = createJwks(kept, { now, graceMs })
    const signer = active === undefined ? undefined : await this.#signerFor(active)
    const previous = this.#snapshot?.jwks
    // The same object while nothing published changed: caches keyed on it (the issuer's own
    // verifier) stay warm across polls.
    const same = previous !== undefined && JSON.stringify(previous) === JSON.stringify(jwks)
    this.#snapshot = {
      activeKid: active?.kid,
      // From the keys before pruning: the more of the chain it sees, the earlier, never later.
      // An HS256 ring's key signs ID tokens only: its access tokens have no RS256 period.
      rs256Since:
        algorithm !== 'RS256' || active === undefined ? undefined : rs256PeriodStart(after),
      jwks: same ? previous : jwks,
      signer,
    }
    // Only the active key signs; forgetting the others keeps a long-lived process from holding
    // every private key it has ever used.
    for (const kid of this.#signers.keys()) if (kid !== active?.kid) this.#signers.delete(kid)
  }

  #rotationDue(active: StoredKey | undefined, mode: 'load' | 'reload', now: number): boolean {
    if (active === undefined) return true
    const { rotateOnRestart, rotationMs } = this.#options
    const laterDate = (kidDate(active.kid) ?? kidForDate(active.createdAt)) < kidForDate(now)
    if (mode === 'load' && rotateOnRestart && laterDate) return true
    return rotationMs !== undefined && now - active.createdAt >= rotationMs
  }

  /** Encrypts the keys stored before KEY_ENCRYPTION_SECRET was set. */
  async #encryptPlaintext(current: TenantKeys): Promise<void> {
    for (const key of current.keys) {
      if (isSealed(key.privateKey)) continue
      const sealed = this.#cipher.seal(key.privateKey, key.tenant, key.kid)
      // Conditional: a replica that encrypted it first keeps its envelope.
      await this.#options.store.updatePrivateKey(key.tenant, key.kid, key.privateKey, sealed)
    }
  }

  #current(): Snapshot {
    if (this.#snapshot === undefined) {
      throw new Error('unreachable: loadKeyRing loads a ring before handing it out')
    }
    return this.#snapshot
  }

  async #signerFor(key: StoredKey): Promise<TokenSigner> {
    const cached = this.#signers.get(key.kid)
    if (cached !== undefined) return cached
    const privateKey = this.#cipher.open(key.privateKey, key.tenant, key.kid)
    const signer = await createRs256Signer(
      parsePrivateJwk({ ...key, privateKey }),
      key.kid,
      key.tenant,
    )
    this.#signers.set(key.kid, signer)
    return signer
  }
}

/** Options of {@link verifyStoredKeys}. */
export interface VerifyStoredKeysOptions {
  /** Tenant name. */
  tenant: string
  /** Where the key pairs live. */
  store: KeyStore
  /** KEY_ENCRYPTION_SECRET, as given to {@link loadKeyRing}. */
  encryptionSecret?: string
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
  const { keys } = await readTenantKeys(options.store, options.tenant)
  checkPrivateKeysOpen(keys, cipher)
}
