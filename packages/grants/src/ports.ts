/**
 * Ports the grants declare; adapters live in @tessera/store (state) and apps/issuer (users,
 * client keys).
 *
 * @module
 */
import type { Client } from '@tessera/config-schema'
import type { JWTHeaderParameters, KeyLike } from 'jose'

/** When a failure is counted, and the length of a window it opens. */
export interface ThrottleWindow {
  /** Epoch milliseconds. */
  now: number
  /** The length of a window that a failure opens when its key has none open. */
  windowMs: number
}

/** When a reservation is made, and how long its hold lasts if it is never settled. */
export interface ReservationTerms {
  /** Epoch milliseconds. */
  now: number
  /**
   * The hold's lease: from `now + leaseMs` on it does not count as in flight, so the holds of a
   * process that stopped before settling free their keys on their own.
   */
  leaseMs: number
}

/** One counter to reserve an attempt on. */
export interface ThrottleLimit {
  key: string
  /** How many failures a window may hold; attempts in flight count towards it until settled. */
  limit: number
}

/** The outcome of a reservation of one password check on several counters at once. */
export type Reservation =
  /** Every key holds this attempt as in flight, under `hold`, until it is settled. */
  | { status: 'granted'; hold: string }
  /**
   * Nothing was held: the open window of `key`, the first key asked that is full, already holds
   * its limit of settled failures, and refuses until `resetAt` (epoch milliseconds).
   */
  | { status: 'blocked'; key: string; resetAt: number }
  /**
   * Nothing was held: no key is blocked, but the failures and the attempts in flight of `key`
   * reach its limit. Asking again once some of those settle may be granted.
   */
  | { status: 'busy'; key: string }

/** How a held attempt ends once the provider has answered (or could not). */
export interface Settlement {
  /** The hold to end, on every key it was granted on. */
  hold: string
  /** Keys to count one failure on (a wrong password), in their open window or a new one. */
  fail: readonly string[]
  /** Keys whose failures are forgotten (after a successful sign-in); holds on them stay. */
  clear: readonly string[]
}

/**
 * Counts failed password checks per key (tenant+username, client address) in a fixed window,
 * and the checks still in flight, so that every replica sees the same counts. An attempt is
 * held before the provider is asked and settled after: a wrong password turns its hold into a
 * failure, anything else ends the hold (a success also clears the user's failures). Only
 * settled failures refuse; concurrent reservations of one key, from any process or replica,
 * never hold more than its limit minus its failures, so at most the limit's worth of wrong
 * passwords is ever checked in one window.
 */
export interface ThrottleStore {
  /**
   * Holds one attempt on every key, or on none: `blocked` when a key's open window holds its
   * limit of failures (the first such key asked), else `busy` when a key's failures plus live
   * holds reach its limit, else `granted`. Atomic: the checks and the holds are one step. Keys
   * must be distinct.
   */
  reserveAttempts(keys: readonly ThrottleLimit[], terms: ReservationTerms): Promise<Reservation>
  /**
   * Ends a hold, counts its failures and clears keys in one atomic step. A failure counts even
   * when the hold's lease has run out; ending a hold that is gone is nothing. `fail` and
   * `clear` must not share a key.
   */
  settleAttempts(settlement: Settlement, window: ThrottleWindow): Promise<void>
}

/** One counter of failed client authentications, with the most failures its window may hold. */
export interface FailureLimit {
  key: string
  limit: number
}

/** The window open on a key: the failures it holds and when it ends (epoch milliseconds). */
export interface FailureWindow {
  count: number
  resetAt: number
}

/** What {@link FailureCounter.recordFailure} did. */
export type FailureRecord =
  | { recorded: true }
  /** Nothing was counted: `blocked`, the first key asked whose window is full, until `resetAt`. */
  | { recorded: false; blocked: string; resetAt: number }

/**
 * Counts failed client authentications per key (client_id+address, address) in fixed windows,
 * in a table of its own, shared by every replica. Only failures are counted: a request is
 * checked against the counts before its credentials are, and counted after they failed.
 */
export interface FailureCounter {
  /** The window open at `now` on each key, in the order asked; undefined where none is open. */
  failures(keys: readonly string[], now: number): Promise<(FailureWindow | undefined)[]>
  /**
   * Counts one failure on every key if each one's window open at `window.now` holds fewer than
   * its limit, and on none otherwise; a key with no open window opens one of `windowMs`.
   * Atomic, across processes and replicas: of any number of concurrent calls, at most a key's
   * limit are counted in one window. Keys must be distinct.
   */
  recordFailure(keys: readonly FailureLimit[], window: ThrottleWindow): Promise<FailureRecord>
}

/** What a provider script answers for a good username and password. */
export interface AuthenticatedUser {
  sub: string
  claims?: Record<string, unknown>
}

/**
 * Checks a username and password against the tenant's provider scripts. Resolves with the user,
 * or null for a wrong username or password; rejects with a `ProviderFailureError` when a provider
 * does not answer in time, throws, or answers something malformed.
 */
export interface UserAuthenticator {
  authenticate(credentials: {
    username: string
    password: string
  }): Promise<AuthenticatedUser | null>
}

/**
 * The public keys of `private_key_jwt` clients: inline (`jwks`) or fetched from `jwks_uri`.
 */
export interface ClientKeys {
  /**
   * The key that verifies an assertion of `client` with this protected header (its `kid` and
   * `alg` pick the key). Rejects with jose's `JWKSNoMatchingKey` (or `JWKSMultipleMatchingKeys`)
   * when no single key of the client fits, and with a `ClientKeysUnavailableError` when the
   * client's key set cannot be had at all (its `jwks_uri` never answered usefully).
   */
  resolve(client: Client, header: JWTHeaderParameters): Promise<KeyLike>
}

/** Injectable time source (epoch milliseconds). */
export type Clock = () => number

/** An authorization code as stored: only the SHA-256 of the code itself is kept. */
export interface AuthorizationCodeRecord {
  /** Hex SHA-256 of the code. */
  codeHash: string
  tenant: string
  clientId: string
  redirectUri: string
  /** The PKCE S256 challenge, when the request had one. */
  codeChallenge?: string
  /** Granted scopes, space-separated. */
  scope: string
  sub: string
  /** Extra claims the provider returned at sign-in, carried into every token of this grant. */
  claims: Record<string, unknown>
  /** Epoch milliseconds. */
  createdAt: number
  expiresAt: number
  /** Set once the code has been redeemed (or its sign-in session ended, see `endSession`). */
  consumedAt?: number
  /** OpenID Connect: the request's `nonce`, byte for byte, echoed in the ID token. */
  nonce?: string
  /** OpenID Connect: the sign-in session the code came from (the `sid` claim). */
  sid?: string
  /**
   * The resources (RFC 8707) the authorization request named, as configured; absent when it
   * named none. Tokens of the sign-in may be for these only.
   */
  resources?: string[]
  /** OpenID Connect: when the user typed the password (epoch milliseconds; `auth_time`). */
  authTime?: number
  /** `dpop_jkt` (RFC 9449 §10): the code is redeemed only with a proof of this key thumbprint. */
  dpopJkt?: string
}

/** A refresh-token family: every refresh token descended from one sign-in. */
export interface RefreshFamily {
  familyId: string
  tenant: string
  clientId: string
  sub: string
  /** The scope of the grant, space-separated; refreshes may narrow access tokens, never this. */
  scope: string
  claims: Record<string, unknown>
  /** The code the family was issued from, so a replay of that code can revoke it. */
  codeHash?: string
  /**
   * OpenID Connect: the sign-in session the family was started by (`sid`), so that ending the
   * session (logout) revokes it.
   */
  sid?: string
  /** OpenID Connect: when the user typed the password (epoch milliseconds; `auth_time`). */
  authTime?: number
  /** The resources (RFC 8707) its sign-in named, as configured; absent when it named none. */
  resources?: string[]
  /**
   * The thumbprint of the DPoP key the family's refresh tokens are bound to (a public client's,
   * RFC 9449 §5): each refresh needs a proof made with that key. Absent: not bound.
   */
  dpopJkt?: string
  createdAt: number
  /** Absolute end of the family (REFRESH_TOKEN_EXPIRATION_IN_HOURS after sign-in). */
  expiresAt: number
  revokedAt?: number
}

/** One refresh token of a family; only its SHA-256 is kept. */
export interface RefreshTokenRecord {
  /** Hex SHA-256 of the token. */
  tokenHash: string
  familyId: string
  createdAt: number
  /** Set once the token has been exchanged for a new one. */
  spentAt?: number
}

/**
 * The family created when a code is redeemed, with its first refresh token. A client without
 * the refresh_token grant gets a family without a token: it holds no refresh token, but its
 * access tokens name it, so a replay of the code still revokes them (RFC 6749 §4.1.2).
 */
export interface FamilyIssue {
  family: RefreshFamily
  /** Hex SHA-256 of the first refresh token; absent when none is handed out. */
  tokenHash?: string
}

/** How {@link AuthorizationCodeStore.saveCode} bounds the codes of one sign-in session. */
export interface SaveCodeOptions {
  /**
   * For a code with a `sid`: in the same transaction, every unconsumed code of the same tenant,
   * `sid` and `clientId` is deleted except the newest `keepPerSession` (the saved one included,
   * newest by `createdAt`), so that requests riding a live session cannot grow the table. A
   * positive integer.
   */
  keepPerSession: number
}

/** Storage of authorization codes. */
export interface AuthorizationCodeStore {
  saveCode(code: AuthorizationCodeRecord, options?: SaveCodeOptions): Promise<void>
  findCode(tenant: string, codeHash: string): Promise<AuthorizationCodeRecord | undefined>
  /**
   * Marks the code consumed if it is not yet consumed and not expired at `now`, and in the same
   * transaction creates `issue` (when given). Returns true only for the one call that consumed
   * it: concurrent redemptions of one code, from any replica, see exactly one true.
   */
  redeemCode(
    tenant: string,
    codeHash: string,
    now: number,
    issue: FamilyIssue | undefined,
  ): Promise<boolean>
}

/** What happened to a refresh token presented for rotation. */
export type RotateResult =
  /** The token was live: it is now spent and `newHash` is the family's live token. */
  | { status: 'rotated'; family: RefreshFamily }
  /** The token was already spent: the whole family is now revoked (reuse detection). */
  | { status: 'reused'; family: RefreshFamily }
  /** The family was already revoked or has expired; nothing changed. */
  | { status: 'inactive'; family: RefreshFamily }
  | { status: 'not_found' }

/** Storage of refresh-token families. */
export interface RefreshTokenStore {
  findRefreshToken(
    tenant: string,
    tokenHash: string,
  ): Promise<{ token: RefreshTokenRecord; family: RefreshFamily } | undefined>
  /**
   * In one transaction: family expired at `now` → inactive (nothing changes); token spent →
   * revoke the family (keeping the first revokedAt) → reused; family revoked → inactive; else
   * spend the token and insert `newHash` → rotated. A spent token always answers `reused`, so
   * of N concurrent rotations of one token exactly one is `rotated` and the rest `reused`.
   */
  rotateRefreshToken(
    tenant: string,
    oldHash: string,
    newHash: string,
    now: number,
  ): Promise<RotateResult>
  /**
   * `rotateRefreshToken` of a token presented by `clientId`, in one transaction. A token whose
   * family belongs to another client answers `not_found` and changes nothing, as an unknown
   * token does; any other token is rotated exactly as `rotateRefreshToken` rotates it. The
   * refresh grant calls it when the request narrows no scope, instead of `findRefreshToken`
   * followed by `rotateRefreshToken`: one read and one round trip fewer.
   */
  rotateRefreshTokenForClient(
    tenant: string,
    clientId: string,
    oldHash: string,
    newHash: string,
    now: number,
  ): Promise<RotateResult>
  /** One family by id, whatever its state; undefined once purged or when never created. */
  findFamily(tenant: string, familyId: string): Promise<RefreshFamily | undefined>
  revokeFamily(tenant: string, familyId: string, now: number): Promise<void>
  /** Revokes every family issued from one code (a replayed code, RFC 6749 §4.1.2). */
  revokeFamiliesByCode(tenant: string, codeHash: string, now: number): Promise<void>
}

/**
 * Marks that expire, shared by every replica: single-use identifiers (a posted login form, a
 * client assertion's jti) and revocations (an access token's jti until its exp).
 */
export interface MarkStore {
  /**
   * Sets the mark (tenant, kind, id) until `expiresAt` (epoch ms). Answers true for the call
   * that set it, false when it was already set and not expired at `now`. Of concurrent calls for
   * one mark, from any replica, exactly one answers true. An expired mark counts as unset.
   *
   * @throws TypeError for a kind that is not 1–32 characters (without U+0000), an id that is not
   *   1–512 characters of well-formed Unicode, or a time that is not integer epoch milliseconds;
   *   an id chosen by a client (a jti) must be checked, or hashed, before it is marked
   */
  mark(tenant: string, kind: string, id: string, expiresAt: number, now: number): Promise<boolean>
  /** Whether (tenant, kind, id) is set and not expired at `now`. */
  isMarked(tenant: string, kind: string, id: string, now: number): Promise<boolean>
}

/**
 * An OpenID Connect single sign-on session: one browser's sign-in at one tenant. The browser
 * holds a random value in a cookie; only its SHA-256 is stored.
 */
export interface SessionRecord {
  /** Hex SHA-256 of the cookie value. */
  idHash: string
  tenant: string
  /**
   * The public id of the sign-in (the `sid` claim of ID tokens), random, not the cookie. A new
   * login of the same user in the same browser keeps it (the cookie value is new), so a logout
   * ends everything that browser's sign-ins started.
   */
  sid: string
  sub: string
  /** The provider's claims at sign-in. */
  claims: Record<string, unknown>
  /** When the user typed the password (epoch milliseconds). */
  authTime: number
  createdAt: number
  /** Absolute end (SESSION_TTL_HOURS after the login). */
  expiresAt: number
  /** Set once the session was ended (logout, or replaced by a newer login in that browser). */
  endedAt?: number
}

/** Storage of sign-in sessions, shared by every replica. */
export interface SessionStore {
  /**
   * Saves a new session. With `replaces` (the idHash of the session the browser held before),
   * that session is ended (endedAt = `session.createdAt`, unless already ended) in the same
   * transaction, so a browser never holds two live sessions.
   */
  createSession(session: SessionRecord, replaces?: string): Promise<void>
  /** One session by the hash of its cookie value, whatever its state; undefined when unknown. */
  findSession(tenant: string, idHash: string): Promise<SessionRecord | undefined>
  /**
   * Logout, in one transaction and in this order: every session of (tenant, sid) gets
   * endedAt = `now` (those already ended keep theirs); every unconsumed code of that sid is marked
   * consumed (so a code issued just before cannot start a family afterwards); every family of
   * that sid is revoked (keeping the first revokedAt). Answers whether a session that was live at
   * `now` (not ended, not expired) was ended. Concurrent with `redeemCode` of a code of that sid,
   * from any replica, either the redemption fails or its family is revoked.
   */
  endSession(tenant: string, sid: string, now: number): Promise<boolean>
}

/** Server-wide secrets: one value per name, the same for every replica, kept in the store. */
export interface SecretStore {
  /**
   * The stored value of `name`; when there is none, stores `candidate` (insert-if-absent) and
   * answers whichever value is stored afterwards, so concurrent callers all get one value.
   */
  getOrCreateSecret(name: string, candidate: string): Promise<string>
}

/** Removal of rows that can no longer matter. */
export interface ExpiryStore {
  /** Deletes expired codes, families (and their tokens), throttle windows and holds, marks and sessions (expired or ended). */
  purgeExpired(now: number): Promise<number>
}
