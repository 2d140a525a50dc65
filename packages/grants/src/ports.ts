/**
 * Ports the grants declare; adapters live in @tessera/store (state) and apps/issuer (users).
 *
 * @module
 */

/** The outcome of recording one failed password check. */
export interface FailureCount {
  /** Failures within the current window, including this one. */
  count: number
  /** Epoch milliseconds when the window that holds these failures ends. */
  resetAt: number
}

/**
 * Counts failed password checks per key (tenant+username, client address) in a fixed window.
 * Kept in the store so that every replica sees the same counts.
 */
export interface ThrottleStore {
  /** Adds one failure to `key`; opens a new window of `windowMs` when none is open at `now`. */
  recordFailure(key: string, now: number, windowMs: number): Promise<FailureCount>
  /** The failures of the open window at `now`, or `{ count: 0 }` when none is open. */
  getFailures(key: string, now: number): Promise<FailureCount>
  /** Forgets `key` (after a successful sign-in). */
  clearFailures(key: string): Promise<void>
}

/** What a provider script answers for a good username and password (DESIGN §3). */
export interface AuthenticatedUser {
  sub: string
  claims?: Record<string, unknown>
}

/** Checks a username and password against the tenant's provider scripts. */
export interface UserAuthenticator {
  authenticate(credentials: {
    username: string
    password: string
  }): Promise<AuthenticatedUser | null>
}

/** Injectable time source (epoch milliseconds). */
export type Clock = () => number

/** An authorization code as stored: only the SHA-256 of the code itself is kept (DESIGN §8). */
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
  /** Set once the code has been redeemed. */
  consumedAt?: number
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

/** The refresh family (and its first token) created when a code is redeemed. */
export interface FamilyIssue {
  family: RefreshFamily
  tokenHash: string
}

/** Storage of authorization codes. */
export interface AuthorizationCodeStore {
  saveCode(code: AuthorizationCodeRecord): Promise<void>
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
   * Optional: `rotateRefreshToken` of a token presented by `clientId`, in one transaction. A
   * token whose family belongs to another client answers `not_found` and changes nothing, as an
   * unknown token does; any other token is rotated exactly as `rotateRefreshToken` rotates it.
   * When an adapter has it, the refresh grant calls it instead of `findRefreshToken` followed by
   * `rotateRefreshToken`, saving a read and a round trip; without it, the grant makes those two
   * calls, with the same outcome.
   */
  rotateRefreshTokenForClient?(
    tenant: string,
    clientId: string,
    oldHash: string,
    newHash: string,
    now: number,
  ): Promise<RotateResult>
  revokeFamily(tenant: string, familyId: string, now: number): Promise<void>
  /** Revokes every family issued from one code (a replayed code, RFC 6749 §4.1.2). */
  revokeFamiliesByCode(tenant: string, codeHash: string, now: number): Promise<void>
}

/** A pending sign-in: what /authorize was asked, waiting for the login form. */
export interface LoginTransaction {
  /** Hex SHA-256 of the CSRF token that the login form carries. */
  id: string
  tenant: string
  clientId: string
  redirectUri: string
  /** The client's `state`, byte for byte. */
  state?: string
  codeChallenge?: string
  /** Granted scopes, space-separated. */
  scope: string
  /** Hex SHA-256 of the value of the browser cookie this transaction is bound to. */
  bindingHash: string
  createdAt: number
  expiresAt: number
}

/** Storage of login transactions; each is used once. */
export interface LoginTransactionStore {
  saveLoginTransaction(transaction: LoginTransaction): Promise<void>
  /**
   * Deletes and returns the transaction if it exists and has not expired at `now`; undefined
   * otherwise. Concurrent takes of one id see it at most once.
   */
  takeLoginTransaction(
    tenant: string,
    id: string,
    now: number,
  ): Promise<LoginTransaction | undefined>
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
  /**
   * Deletes expired codes, login transactions, families (and their tokens), throttle windows and
   * marks.
   */
  purgeExpired(now: number): Promise<number>
}
