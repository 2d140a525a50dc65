import { pino } from 'pino'
import type { DestinationStream, Level, Logger } from 'pino'

// Defence in depth: no code path logs bodies or credentials, and these paths are censored even
// if one ever tried.
const REDACT = [
  'password',
  'client_secret',
  'access_token',
  'refresh_token',
  'code',
  'code_verifier',
  'jwtSecret',
  'clientSecret',
  'headers.authorization',
  'headers.cookie',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
  '*.code_verifier',
  '*.jwtSecret',
  '*.clientSecret',
]

/** The issuer's JSON logger. */
export function createLogger(level: Level | 'silent', destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, destination)
}
