import { ThrottleBusyError, ThrottledError } from './throttle.js'

/** How the login form tells a refused or undecided attempt: its message, status and delay. */
export interface ThrottleRefusal {
  message: string
  status: 429 | 503
  retryAfterSeconds: number
}

/** The login form's answer to a throttle error; undefined for any other error. */
export function throttleRefusal(error: unknown): ThrottleRefusal | undefined {
  if (error instanceof ThrottledError) {
    return {
      message:
        error.throttledBy === 'user'
          ? 'Too many failed sign-in attempts for this user. Wait a while, then try again.'
          : 'Too many failed sign-in attempts from this address. Wait a while, then try again.',
      status: 429,
      retryAfterSeconds: error.retryAfterSeconds ?? 1,
    }
  }
  if (error instanceof ThrottleBusyError) {
    return {
      message: 'Too many sign-ins are being checked at once. Try again in a moment.',
      status: 503,
      retryAfterSeconds: error.retryAfterSeconds,
    }
  }
  return undefined
}
