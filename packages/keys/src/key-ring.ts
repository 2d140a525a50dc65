import { KeyError } from './errors.js'
import { generateRsaKey } from './generate.js'
import { createJwks, type JwksDocument } from './jwks.js'
import { kidForDate } from './kid.js'
import type { KeyStore, StoredKey } from './ports.js'
import type { SignedToken, SigningAlgorithm, TokenSigner } from './signer.js'
import { createKeyCipher, isSealed, type KeyCipher } from './internal/key-cipher.js'
import {
  checkPrivateKeysOpen,
  createActiveKey,
  readTenantKeys,
  type GenerateKey,
  type TenantKeys,
} from './internal/key-ops.js'
import { kidDate } from './internal/kid.js'
import { isPastGrace, retiredSince, rs256PeriodStart } from './internal/lifecycle.js'
import { keyGenerations } from './internal/limiter.js'
import { checkOptions } from './internal/ring-options.js'
import { signingState, signsFrom } from './internal/publish-ahead.js'
import { createRs256Signer } from './internal/rs256-signer.js'
import { parsePrivateJwk, parseStoredKeys } from './internal/stored-key.js'

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

/** What a ring keeps of its active key: not the private key, which the store holds. */
type ActiveKey = Pick<StoredKey, 'kid' | 'createdAt'> & { signsFrom: number }

interface Snapshot {
  active: ActiveKey | undefined
  /** The key that takes over from `active` at its `signsFrom`. */
  next: ActiveKey | undefined
  nextSigner: TokenSigner | undefined
  rs256Since: number | undefined
  jwks: JwksDocument
  signer: TokenSigner | undefined
  /**
   * When the next retired key leaves the JWKS, or the next key starts signing (then the store
   * retires the old one), epoch ms; Infinity when neither will.
   */
  nextExpiry: number
  /** Whether the store held any key of the tenant, in any state. */
  hadKeys: boolean
}

const noKeys = { signing: undefined, next: undefined }

function activeKeyOf(key: StoredKey): ActiveKey {
  return { kid: key.kid, createdAt: key.createdAt, signsFrom: signsFrom(key) }
}

/** A key to make within a refresh: why, and how its candidates are generated. */
interface Make {
  reason: KeyMakeReason
  generate: GenerateKey
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

class TenantKeyRing implements KeyRing {
  readonly tenant: string
  readonly algorithm: SigningAlgorithm
  /** Whether the ring keeps an active RS256 key: RS256 access tokens, or ID tokens. */
  readonly #keepsKey: boolean
  readonly #options: LoadKeyRingOptions
  readonly #cipher: KeyCipher
  // Made when first needed, as is the queue: ten thousand rings, most of which never sign, need
  // none of them.
  #signers: Map<string, TokenSigner> | undefined
  #opening: Map<string, Promise<TokenSigner>> | undefined
  #stableSigner: TokenSigner | undefined
  #snapshot: Snapshot | undefined
  /** The reload under way, shared by concurrent callers. */
  #pending: Promise<void> | undefined
  /** The key being made, shared: one generation per ring however many wait. */
  #making: Promise<void> | undefined
  /** Reads and writes of this ring run one at a time; generation runs outside it. */
  #queue: Promise<unknown> | undefined
  /** The load found an active key of an earlier date with rotateOnRestart: rotate until done. */
  #restartPending = false

  constructor(options: LoadKeyRingOptions, cipher: KeyCipher) {
    this.tenant = options.tenant
    this.algorithm = options.algorithm
    this.#keepsKey = options.algorithm === 'RS256' || options.idTokens === true
    this.#options = options
    this.#cipher = cipher
  }

  async load(keys: readonly StoredKey[] | undefined, verified: boolean): Promise<void> {
    await this.#serially(() => this.#refresh('load', keys, undefined, verified))
    this.#startDue()
  }

  activeKid(): string | undefined {
    return this.#current().active?.kid
  }

  nextKey(): { kid: string; signsFrom: number } | undefined {
    const next = this.#current().next
    return next === undefined ? undefined : { kid: next.kid, signsFrom: next.signsFrom }
  }

  activeSignsFrom(): number | undefined {
    return this.#current().active?.signsFrom
  }

  rs256Since(): number | undefined {
    return this.#current().rs256Since
  }

  jwks(): JwksDocument {
    return this.#current().jwks
  }

  async ensureKey(): Promise<void> {
    if (!this.#keepsKey || this.#current().signer !== undefined) return
    await this.#make('first')
    if (this.#current().signer === undefined) {
      throw new KeyError('ERR_NO_ACTIVE_KEY', `tenant "${this.tenant}" has no active key`)
    }
  }

  signer(): TokenSigner {
    if (!this.#keepsKey) {
      throw new KeyError(
        'ERR_NO_ACTIVE_KEY',
        `tenant "${this.tenant}" signs with ${this.algorithm} and has no OpenID Connect clients; ` +
          'its key ring holds no signing key',
      )
    }
    // One object for the ring's life that looks the active key up per token: callers that took
    // it once (the grant context) sign with a rotated key as soon as the ring switched to it.
    this.#stableSigner ??= {
      alg: 'RS256',
      sign: async (claims): Promise<SignedToken> => {
        if (this.#current().signer === undefined) await this.ensureKey()
        const { signer } = this.#current()
        if (signer === undefined) throw new Error('unreachable: ensureKey leaves a signer')
        return signer.sign(claims)
      },
    }
    return this.#stableSigner
  }

  reload(): Promise<void> {
    this.#pending ??= this.#serially(() => this.#refresh('reload'))
      .then(() => this.#startDue())
      .finally(() => {
        this.#pending = undefined
      })
    return this.#pending
  }

  async maintain(): Promise<void> {
    try {
      if (this.#options.now() >= this.#current().nextExpiry) await this.reload()
      else this.#startDue()
      await this.#making
    } catch {
      // A failed reload keeps what the ring had and the next poll retries; a failed make was
      // reported through onEvent and is retried by the next need.
    }
  }

  async idle(): Promise<void> {
    while (this.#making !== undefined || this.#pending !== undefined) {
      await Promise.allSettled([this.#making, this.#pending])
    }
    await this.#queue
  }

  #serially<T>(step: () => Promise<T>): Promise<T> {
    const run = (this.#queue ?? Promise.resolve()).then(step)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Starts in the background the key the ring is due to make, if any. */
  #startDue(): void {
    const { active, next, hadKeys } = this.#current()
    const reason = this.#dueReason(active, next, this.#options.now())
    if (reason === undefined) return
    // A ring that never had a key waits for its first use, unless its tenant switches from
    // HS256 (the key must be published ahead); one whose active key was revoked without a
    // replacement had keys, and gets a new one now.
    if (reason === 'first' && !hadKeys && this.#options.firstKeyAhead !== true) return
    this.#make(reason).catch(() => undefined)
  }

  /** Why the ring should make a key now, given its active key; undefined when it should not. */
  #dueReason(
    active: Pick<StoredKey, 'kid' | 'createdAt'> | undefined,
    next: Pick<StoredKey, 'kid'> | undefined,
    now: number,
  ): KeyMakeReason | undefined {
    if (!this.#keepsKey || this.#options.signal?.aborted === true) return undefined
    if (active === undefined) return 'first'
    // A key published ahead is the rotation under way.
    if (next !== undefined) return undefined
    const { rotationMs } = this.#options
    const laterDate = (kidDate(active.kid) ?? kidForDate(active.createdAt)) < kidForDate(now)
    if (this.#restartPending && laterDate) return 'restart'
    if (rotationMs !== undefined && now - active.createdAt >= rotationMs) return 'age'
    return undefined
  }

  #make(reason: KeyMakeReason): Promise<void> {
    this.#making ??= this.#runMake(reason).finally(() => {
      this.#making = undefined
    })
    return this.#making
  }

  async #runMake(reason: KeyMakeReason): Promise<void> {
    const { tenant, signal } = this.#options
    const previousKid = this.#snapshot?.active?.kid
    try {
      signal?.throwIfAborted()
      if (reason === 'first') {
        // Another process may have made the key since the ring last read: adopt it rather than
        // make a request wait for a generation. Rotations skip this read (a restart would send
        // one per tenant at once); they check again after generating, below.
        await this.#serially(() => this.#refresh('reload'))
        const { active, next } = this.#current()
        if (this.#dueReason(active, next, this.#options.now()) === undefined) {
          this.#report(reason, previousKid)
          return
        }
      }
      // Generated outside the ring's queue: the old key keeps signing, and a reload (another
      // replica's revocation) is not held up behind the generation.
      let spare: StoredKey | undefined = await this.#generate(reason)
      const generate: GenerateKey = async () => {
        signal?.throwIfAborted()
        if (spare === undefined) return this.#generate(reason)
        const key = spare
        spare = undefined
        return key
      }
      await this.#serially(() => this.#refresh('reload', undefined, { reason, generate }))
      this.#report(reason, previousKid)
    } catch (error) {
      if (signal?.aborted !== true) {
        this.#emit({ type: 'key-make-failed', tenant, reason, error })
      }
      throw error
    }
  }

  /** One RSA pair under the process-wide limit; a first key jumps the queue of rotations. */
  #generate(reason: KeyMakeReason): Promise<StoredKey> {
    const { tenant, signal } = this.#options
    const generate = this.#options.generateKey ?? generateRsaKey
    return keyGenerations.run(
      () => {
        const now = this.#options.now()
        return generate(tenant, kidForDate(now), now)
      },
      { urgent: reason === 'first', ...(signal === undefined ? {} : { signal }) },
    )
  }

  #report(reason: KeyMakeReason, previousKid: string | undefined): void {
    const kid = this.#snapshot?.next?.kid ?? this.#snapshot?.active?.kid
    if (kid !== undefined && kid !== previousKid) {
      this.#emit({ type: 'key-made', tenant: this.tenant, reason, kid, previousKid })
    }
  }

  #emit(event: KeyRingEvent): void {
    try {
      this.#options.onEvent?.(event)
    } catch {
      // A logger that throws must not turn a made key into a failure.
    }
  }

  async #refresh(
    mode: 'load' | 'reload',
    given?: readonly StoredKey[],
    make?: Make,
    verified = false,
  ): Promise<void> {
    const { tenant, algorithm, store, graceMs } = this.#options
    const keepsKey = this.#keepsKey
    const now = this.#options.now()
    // Pruned kids matter only to name a new key: read them only then.
    const current: TenantKeys =
      make !== undefined
        ? await readTenantKeys(store, tenant)
        : { keys: parseStoredKeys(given ?? (await store.listKeys(tenant)), tenant), prunedKids: [] }

    // Check everything that can fail before the first write, so that a wrong secret or a
    // corrupted key fails the load without having encrypted, created, retired or deleted a key.
    // A load opens every private key: that is what proves the secret before `start` listens.
    if (mode === 'load' && !verified) checkPrivateKeysOpen(current.keys, this.#cipher)
    createJwks(current.keys, { now, graceMs })
    let { signing: active, next } = keepsKey ? signingState(current.keys, now) : noKeys
    // A load has opened and parsed every key (above, or the caller): the signer waits for the
    // first token. A reload makes it now, so that a key another process made that this one
    // cannot open fails the reload and the ring keeps signing with the key it has.
    if (active !== undefined && mode === 'reload') await this.#signerFor(active)
    if (next !== undefined && mode === 'reload') await this.#signerFor(next)

    if (mode === 'load' && this.#cipher.encrypts) await this.#encryptPlaintext(current)
    if (mode === 'load') {
      this.#restartPending =
        this.#options.rotateOnRestart &&
        active !== undefined &&
        next === undefined &&
        (kidDate(active.kid) ?? kidForDate(active.createdAt)) < kidForDate(now)
    }

    let keys = current.keys
    // A ring that keeps no key retires every active one (a rollback from RS256).
    const superseded = new Set(
      keepsKey ? signingState(keys, now).superseded : keys.filter((k) => k.state === 'active'),
    )
    if (make !== undefined && keepsKey && this.#dueReason(active, next, now) !== undefined) {
      this.#options.signal?.throwIfAborted()
      // A key made while another signs is published ahead; a first key or the replacement of
      // a revoked one signs at once, unless the tenant's access tokens switch from HS256.
      const ahead =
        active !== undefined || this.#options.firstKeyAhead === true
          ? (this.#options.publishAheadMs ?? 0)
          : 0
      ;({ keys } = await createActiveKey(
        store,
        tenant,
        this.#cipher,
        current,
        now,
        make.generate,
        ahead,
      ))
      ;({ signing: active, next } = signingState(keys, now))
      for (const key of signingState(keys, now).superseded) superseded.add(key)
      this.#restartPending = false
    }

    const retire = keys.filter((key) => superseded.has(key))
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
    const signer =
      active === undefined
        ? undefined
        : mode === 'load' && make === undefined
          ? this.#lazySigner(active.kid)
          : await this.#signerFor(active)
    const previous = this.#snapshot?.jwks
    // The same object while nothing published changed: caches keyed on it (the issuer's own
    // verifier) stay warm across polls.
    const same = previous !== undefined && JSON.stringify(previous) === JSON.stringify(jwks)
    let nextExpiry = Infinity
    for (const key of kept) {
      if (key.state === 'retired') nextExpiry = Math.min(nextExpiry, retiredSince(key) + graceMs)
    }
    if (next !== undefined) nextExpiry = Math.min(nextExpiry, signsFrom(next))
    this.#snapshot = {
      active: active === undefined ? undefined : activeKeyOf(active),
      next: next === undefined ? undefined : activeKeyOf(next),
      nextSigner:
        next === undefined
          ? undefined
          : mode === 'load' && make === undefined
            ? this.#lazySigner(next.kid)
            : await this.#signerFor(next),
      // From the keys before pruning: the more of the chain it sees, the earlier, never later.
      // An HS256 ring's key signs ID tokens only: its access tokens have no RS256 period.
      rs256Since:
        algorithm !== 'RS256' || active === undefined ? undefined : rs256PeriodStart(after),
      jwks: same ? previous : jwks,
      signer,
      nextExpiry,
      hadKeys: current.keys.length > 0 || current.prunedKids.length > 0,
    }
    // Only the active key signs; forgetting the others keeps a long-lived process from holding
    // every private key it has ever used.
    for (const kid of this.#signers?.keys() ?? [])
      if (kid !== active?.kid && kid !== next?.kid) this.#signers?.delete(kid)
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
    const snapshot = this.#snapshot
    if (snapshot === undefined) {
      throw new Error('unreachable: loadKeyRing loads a ring before handing it out')
    }
    const { next } = snapshot
    // The next key takes over at its stored instant, on every replica at once, without waiting
    // for a reload; the reload that nextExpiry schedules then retires the old key in the store.
    if (next === undefined || this.#options.now() < next.signsFrom) return snapshot
    this.#snapshot = {
      ...snapshot,
      active: next,
      signer: snapshot.nextSigner ?? this.#lazySigner(next.kid),
      next: undefined,
      nextSigner: undefined,
    }
    return this.#snapshot
  }

  /**
   * A signer of the stored key `kid` that reads, opens and imports the private key on its first
   * signature: a process serving ten thousand tenants holds no private key, not even sealed, of
   * those that never sign. The load has proved that it opens.
   */
  #lazySigner(kid: string): TokenSigner {
    return {
      alg: 'RS256',
      sign: async (claims) => {
        this.#opening ??= new Map()
        let opening = this.#opening.get(kid)
        if (opening === undefined) {
          // One read and one import however many first tokens arrive together.
          opening = this.#storedSigner(kid).finally(() => this.#opening?.delete(kid))
          this.#opening.set(kid, opening)
        }
        return (await opening).sign(claims)
      },
    }
  }

  async #storedSigner(kid: string): Promise<TokenSigner> {
    const cached = this.#signers?.get(kid)
    if (cached !== undefined) return cached
    const { store } = this.#options
    const key = parseStoredKeys(await store.listKeys(this.tenant), this.tenant).find(
      (candidate) => candidate.kid === kid,
    )
    // Revoked or pruned since the load: the next reload gives the ring its new state.
    if (key === undefined || key.state !== 'active') {
      throw new KeyError(
        'ERR_NO_ACTIVE_KEY',
        `tenant "${this.tenant}": key "${kid}" is no longer active`,
      )
    }
    return this.#signerFor(key)
  }

  async #signerFor(key: StoredKey): Promise<TokenSigner> {
    const cached = this.#signers?.get(key.kid)
    if (cached !== undefined) return cached
    const privateKey = this.#cipher.open(key.privateKey, key.tenant, key.kid)
    const signer = await createRs256Signer(
      parsePrivateJwk({ ...key, privateKey }),
      key.kid,
      key.tenant,
    )
    this.#signers ??= new Map()
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
