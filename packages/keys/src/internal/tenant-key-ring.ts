import { KeyError } from '../errors.js'
import type { JwksDocument } from '../jwks.js'
import { createJwks } from '../jwks.js'
import type { KeyMakeReason, KeyRing, KeyRingEvent, LoadKeyRingOptions } from '../key-ring.js'
import type { StoredKey } from '../ports.js'
import type { SignedToken, SigningAlgorithm, TokenSigner } from '../signer.js'
import type { KeyCipher } from './key-cipher.js'
import { checkPrivateKeysOpen, createActiveKey } from './key-ops.js'
import type { GenerateKey, TenantKeys } from './key-ops.js'
import { dueReason, generateKey, isRestartDue, publishAheadMs, spareFirst } from './key-making.js'
import { rs256PeriodStart } from './lifecycle.js'
import { signingState } from './publish-ahead.js'
import { encryptPlaintext, pruneKeys, readRefreshKeys, retireKeys } from './ring-refresh.js'
import { RingSigners } from './ring-signers.js'
import { activeKeyOf, nextExpiryOf, publishedJwks, snapshotAt } from './ring-snapshot.js'
import type { Snapshot } from './ring-snapshot.js'

const noKeys = { signing: undefined, next: undefined }

/** A key to make within a refresh: why, and how its candidates are generated. */
interface Make {
  reason: KeyMakeReason
  generate: GenerateKey
}

/** The keys a refresh settled on: every key, and those that sign now and next. */
interface Settled {
  keys: StoredKey[]
  active: StoredKey | undefined
  next: StoredKey | undefined
}

/** The {@link KeyRing} of one tenant; see `loadKeyRing`. */
export class TenantKeyRing implements KeyRing {
  readonly tenant: string
  readonly algorithm: SigningAlgorithm
  /** Whether the ring keeps an active RS256 key: RS256 access tokens, or ID tokens. */
  readonly #keepsKey: boolean
  readonly #options: LoadKeyRingOptions
  readonly #cipher: KeyCipher
  readonly #signers: RingSigners
  #stableSigner: TokenSigner | undefined
  #snapshot: Snapshot | undefined
  /** The reload under way, shared by concurrent callers. */
  #pending: Promise<void> | undefined
  /** The key being made, shared: one generation per ring however many wait. */
  #making: Promise<void> | undefined
  /**
   * Reads and writes of this ring run one at a time; generation runs outside it. Made when first
   * needed: ten thousand rings, most of which never sign, need no queue.
   */
  #queue: Promise<unknown> | undefined
  /** The load found an active key of an earlier date with rotateOnRestart: rotate until done. */
  #restartPending = false

  constructor(options: LoadKeyRingOptions, cipher: KeyCipher) {
    this.tenant = options.tenant
    this.algorithm = options.algorithm
    this.#keepsKey = options.algorithm === 'RS256' || options.idTokens === true
    this.#options = options
    this.#cipher = cipher
    this.#signers = new RingSigners(options.tenant, options.store, cipher)
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

  #current(): Snapshot {
    const snapshot = this.#snapshot
    if (snapshot === undefined) {
      throw new Error('unreachable: loadKeyRing loads a ring before handing it out')
    }
    this.#snapshot = snapshotAt(snapshot, this.#options.now(), (kid) => this.#signers.lazy(kid))
    return this.#snapshot
  }

  #dueReason(
    active: Pick<StoredKey, 'kid' | 'createdAt'> | undefined,
    next: Pick<StoredKey, 'kid'> | undefined,
    now: number,
  ): KeyMakeReason | undefined {
    const context = {
      keepsKey: this.#keepsKey,
      aborted: this.#options.signal?.aborted === true,
      restartPending: this.#restartPending,
      rotationMs: this.#options.rotationMs,
    }
    return dueReason(context, active, next, now)
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
      const spare = await generateKey(this.#options, reason)
      const generate = spareFirst(spare, () => generateKey(this.#options, reason), signal)
      await this.#serially(() => this.#refresh('reload', undefined, { reason, generate }))
      this.#report(reason, previousKid)
    } catch (error) {
      if (signal?.aborted !== true) {
        this.#emit({ type: 'key-make-failed', tenant, reason, error })
      }
      throw error
    }
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

  /**
   * Reads the tenant's keys, checks them, makes the key `make` asks for (if still due), retires
   * superseded keys, prunes expired ones, and takes the snapshot the ring serves until the next.
   */
  async #refresh(
    mode: 'load' | 'reload',
    given?: readonly StoredKey[],
    make?: Make,
    verified = false,
  ): Promise<void> {
    const { tenant, store, graceMs } = this.#options
    const now = this.#options.now()
    const current = await readRefreshKeys(store, tenant, given, make !== undefined)

    // Check everything that can fail before the first write, so that a wrong secret or a
    // corrupted key fails the load without having encrypted, created, retired or deleted a key.
    // A load opens every private key: that is what proves the secret before `start` listens.
    if (mode === 'load' && !verified) checkPrivateKeysOpen(current.keys, this.#cipher)
    createJwks(current.keys, { now, graceMs })
    const { signing: active, next } = this.#keepsKey ? signingState(current.keys, now) : noKeys
    // A load has opened and parsed every key (above, or the caller): the signer waits for the
    // first token. A reload makes it now, so that a key another process made that this one
    // cannot open fails the reload and the ring keeps signing with the key it has.
    if (active !== undefined && mode === 'reload') await this.#signers.of(active)
    if (next !== undefined && mode === 'reload') await this.#signers.of(next)

    if (mode === 'load' && this.#cipher.encrypts) {
      await encryptPlaintext(store, this.#cipher, current)
    }
    if (mode === 'load') {
      this.#restartPending = isRestartDue(this.#options.rotateOnRestart, active, next, now)
    }

    // A ring that keeps no key retires every active one (a rollback from RS256).
    const superseded = new Set(
      this.#keepsKey
        ? signingState(current.keys, now).superseded
        : current.keys.filter((k) => k.state === 'active'),
    )
    let settled: Settled = { keys: current.keys, active, next }
    if (make !== undefined && this.#keepsKey && this.#dueReason(active, next, now) !== undefined) {
      settled = await this.#makeKey(current, make, active, now)
      for (const key of signingState(settled.keys, now).superseded) superseded.add(key)
    }

    const after = await retireKeys(store, tenant, settled.keys, superseded, now)
    const kept = await pruneKeys(store, tenant, after, now, graceMs)
    const hadKeys = current.keys.length > 0 || current.prunedKids.length > 0
    const lazy = mode === 'load' && make === undefined
    this.#snapshot = await this.#snapshotOf(settled, { after, kept, now, hadKeys, lazy })
    this.#signers.keepOnly([settled.active?.kid, settled.next?.kid])
  }

  /** Makes the ring's new active key within a refresh, published ahead when another signs. */
  async #makeKey(
    current: TenantKeys,
    make: Make,
    active: StoredKey | undefined,
    now: number,
  ): Promise<Settled> {
    this.#options.signal?.throwIfAborted()
    const ahead = publishAheadMs(active, this.#options)
    const { tenant, store } = this.#options
    const { keys } = await createActiveKey(
      store,
      tenant,
      this.#cipher,
      current,
      now,
      make.generate,
      ahead,
    )
    const { signing, next } = signingState(keys, now)
    this.#restartPending = false
    return { keys, active: signing, next }
  }

  /**
   * The snapshot of what a refresh settled on. `lazy`: the signers wait for the first token (a
   * load that made nothing has opened every key already).
   */
  async #snapshotOf(
    { active, next }: Settled,
    state: { after: StoredKey[]; kept: StoredKey[]; now: number; hadKeys: boolean; lazy: boolean },
  ): Promise<Snapshot> {
    const { after, kept, now, hadKeys, lazy } = state
    const { algorithm, graceMs } = this.#options
    const signerOf = (key: StoredKey) =>
      lazy ? this.#signers.lazy(key.kid) : this.#signers.of(key)
    const jwks = publishedJwks(this.#snapshot?.jwks, kept, now, graceMs)
    const signer = active === undefined ? undefined : await signerOf(active)
    return {
      active: active === undefined ? undefined : activeKeyOf(active),
      next: next === undefined ? undefined : activeKeyOf(next),
      nextSigner: next === undefined ? undefined : await signerOf(next),
      // From the keys before pruning: the more of the chain it sees, the earlier, never later.
      // An HS256 ring's key signs ID tokens only: its access tokens have no RS256 period.
      rs256Since:
        algorithm !== 'RS256' || active === undefined ? undefined : rs256PeriodStart(after),
      jwks,
      signer,
      nextExpiry: nextExpiryOf(kept, next, graceMs),
      hadKeys,
    }
  }
}
