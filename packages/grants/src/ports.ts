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
