import { KeyError } from './errors.js'
import { generateRsaKey } from './generate.js'
import { createJwks, type JwksDocument } from './jwks.js'
import { kidForDate } from './kid.js'
import type { KeyStore, StoredKey } from './ports.js'
import type { SigningAlgorithm, TokenSigner } from './signer.js'
import { kidDate, nextKid } from './internal/kid.js'
import { isPastGrace, newestActive } from './internal/lifecycle.js'
import { createRs256Signer } from './internal/rs256-signer.js'
import { parsePrivateJwk, parseStoredKeys } from './internal/stored-key.js'

/** Options of {@link loadKeyRing}. */
export interface LoadKeyRingOptions {
  /** Tenant name; keys are stored and published per tenant. */
  tenant: string
  /** The tenant's `jwt_algorithm`. An HS256 ring only publishes keys left from RS256 days. */
  algorithm: SigningAlgorithm
  /** Where the key pairs live. */
  store: KeyStore
  /** Clock, epoch milliseconds. */
  now: () => number
  /** KEY_ROTATE_ON_RESTART: a load on a later UTC date than the active key's makes a new key. */
  rotateOnRestart: boolean
  /** JWKS_GRACE_HOURS in milliseconds: how long a retired key stays published. */
  graceMs: number
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
  /** The kid of the key that signs new tokens; undefined for an HS256 tenant. */
  activeKid(): string | undefined
  /**
   * The tenant's public keys: the active key and retired keys within the grace. Frozen; the same
   * object until the next reload.
   */
  jwks(): JwksDocument
  /**
   * The RS256 signer of the active key.
   *
   * @throws KeyError `ERR_NO_ACTIVE_KEY` for an HS256 tenant, whose signer is
   * {@link createHs256Signer} over the shared secret
   */
  signer(): TokenSigner
  /**
   * Re-reads the store: picks up keys rotated or revoked by another process, retires and prunes
   * by the same rules as {@link loadKeyRing}. Generates a key only when an RS256 tenant has no
   * active key left (after a revocation). Concurrent calls share one read. On failure the ring
   * keeps serving what it had.
   */
  reload(): Promise<void>
}

// Each attempt follows a lost insert race; losing five in a row means something else is wrong.
const MAX_CREATE_ATTEMPTS = 5

interface Snapshot {
  activeKid: string | undefined
  jwks: JwksDocument
  signer: TokenSigner | undefined
}

function checkOptions(options: LoadKeyRingOptions): void {
  const { tenant, algorithm, store, now, rotateOnRestart, graceMs } = options
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
}

/**
 * Loads the key ring of one tenant, creating, rotating, retiring and pruning keys as needed
 * (DESIGN §6).
 *
 * - RS256: the newest active key signs. With none, a key for today's UTC date is created; with
 *   `rotateOnRestart` and an active key from an earlier date, a new one replaces it and the old
 *   one is retired. A same-day restart reuses the stored key, so the kid and the JWKS stay put.
 * - HS256: no key is created; keys still active from RS256 days are retired, so tokens they
 *   signed keep verifying for the grace.
 * - Both: retired keys past the grace are deleted; revoked keys are never published.
 *
 * Creation is insert-if-absent on (tenant, kid): processes that start together converge on the
 * one key that won the insert.
 *
 * @throws KeyError `ERR_KEY_INVALID` when a stored key is corrupted
 * @example
 * ```ts
 * const ring = await loadKeyRing({
 *   tenant: 'acme',
 *   algorithm: 'RS256',
 *   store: store.keys,
 *   now: Date.now,
 *   rotateOnRestart: true,
 *   graceMs: 4 * 3_600_000,
 * })
 * const { token, kid } = await ring.signer().sign(claims)
 * ctx.body = ring.jwks()
 * ```
 */
export async function loadKeyRing(options: LoadKeyRingOptions): Promise<KeyRing> {
  checkOptions(options)
  const ring = new TenantKeyRing({ ...options })
  await ring.refresh('load')
  return ring
}

class TenantKeyRing implements KeyRing {
  readonly tenant: string
  readonly algorithm: SigningAlgorithm
  readonly #options: LoadKeyRingOptions
  readonly #signers = new Map<string, TokenSigner>()
  #snapshot: Snapshot | undefined
  #pending: Promise<void> | undefined

  constructor(options: LoadKeyRingOptions) {
    this.tenant = options.tenant
    this.algorithm = options.algorithm
    this.#options = options
  }

  activeKid(): string | undefined {
    return this.#current().activeKid
  }

  jwks(): JwksDocument {
    return this.#current().jwks
  }

  signer(): TokenSigner {
    const { signer } = this.#current()
    if (signer === undefined) {
      throw new KeyError(
        'ERR_NO_ACTIVE_KEY',
        `tenant "${this.tenant}" signs with ${this.algorithm}; its key ring holds no signing key`,
      )
    }
    return signer
  }

  reload(): Promise<void> {
    this.#pending ??= this.refresh('reload').finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  async refresh(mode: 'load' | 'reload'): Promise<void> {
    const { tenant, algorithm, store, rotateOnRestart, graceMs } = this.#options
    const now = this.#options.now()
    let keys = await this.#read()

    let active: StoredKey | undefined
    if (algorithm === 'RS256') {
      active = newestActive(keys)
      const stale =
        active !== undefined &&
        mode === 'load' &&
        rotateOnRestart &&
        (kidDate(active.kid) ?? kidForDate(active.createdAt)) < kidForDate(now)
      if (active === undefined || stale) ({ active, keys } = await this.#createActiveKey(keys, now))
    }

    // Work out the whole outcome before writing anything, so that a corrupted key fails the load
    // without having retired or deleted what was there.
    const retire = keys.filter((key) => key.state === 'active' && key.kid !== active?.kid)
    const after = keys.map((key) =>
      retire.includes(key) ? { ...key, state: 'retired' as const, retiredAt: now } : key,
    )
    const prune = after.filter((key) => isPastGrace(key, now, graceMs))
    const kept = after.filter((key) => !prune.includes(key))
    const jwks = createJwks(kept, { now, graceMs })
    const signer = active === undefined ? undefined : await this.#signerFor(active)

    for (const key of retire) await store.updateKeyState(tenant, key.kid, 'retired', now)
    for (const key of prune) await store.deleteKey(tenant, key.kid)

    this.#snapshot = { activeKid: active?.kid, jwks, signer }
    // Only the active key signs; forgetting the others keeps a long-lived process from holding
    // every private key it has ever used.
    for (const kid of this.#signers.keys()) if (kid !== active?.kid) this.#signers.delete(kid)
  }

  #current(): Snapshot {
    if (this.#snapshot === undefined) {
      throw new Error('unreachable: loadKeyRing loads a ring before handing it out')
    }
    return this.#snapshot
  }

  async #read(): Promise<StoredKey[]> {
    return parseStoredKeys(await this.#options.store.listKeys(this.tenant), this.tenant)
  }

  async #createActiveKey(
    keys: StoredKey[],
    now: number,
  ): Promise<{ active: StoredKey; keys: StoredKey[] }> {
    const { tenant, store } = this.#options
    let current = keys
    for (let attempt = 1; attempt <= MAX_CREATE_ATTEMPTS; attempt++) {
      const kid = nextKid(
        current.map((key) => key.kid),
        now,
      )
      const candidate = await generateRsaKey(tenant, kid, now)
      if (await store.insertKeyIfAbsent(candidate)) {
        return { active: candidate, keys: [...current, candidate] }
      }
      // Another process inserted this kid first: use its key, so that every replica signs with
      // and publishes the same one (DESIGN §6).
      current = await this.#read()
      const winner = current.find((key) => key.kid === kid)
      if (winner?.state === 'active') return { active: winner, keys: current }
    }
    throw new KeyError(
      'ERR_KEY_CONFLICT',
      `could not create a key for tenant "${tenant}": ${MAX_CREATE_ATTEMPTS} inserts lost to other writers`,
    )
  }

  async #signerFor(key: StoredKey): Promise<TokenSigner> {
    const cached = this.#signers.get(key.kid)
    if (cached !== undefined) return cached
    const signer = await createRs256Signer(parsePrivateJwk(key), key.kid, key.tenant)
    this.#signers.set(key.kid, signer)
    return signer
  }
}
