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

/**
 * The issuer's JSON logger, writing to `destination`, by default stdout through
 * `createTurnBufferedStdout`.
 */
export function createLogger(level: Level | 'silent', destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT, censor: '[redacted]' } },
    destination ?? createTurnBufferedStdout(),
  )
}

/**
 * Stdout, written once per turn of the event loop: the lines logged during one turn (under
 * load, those of several requests) leave in one write instead of one write each (measured on a
 * pipe: 2 µs a line written alone, 0.5 µs in fives). A line waits at most until the end of the
 * turn it was logged in; at exit (process.exit, or an uncaught exception) what is pending is
 * written before the process ends. Only a kill that gives the process no exit at all (SIGKILL)
 * can lose the lines of the turn it interrupts.
 */
export function createTurnBufferedStdout(): DestinationStream {
  // pino's own stdout: synchronous, retries partial writes, and stops quietly on EPIPE.
  const stdout = pino.destination({ dest: 1, sync: true })
  let pending = ''
  const flush = (): void => {
    if (pending === '') return
    const text = pending
    pending = ''
    stdout.write(text)
  }
  process.once('exit', flush)
  return {
    write(line: string) {
      if (pending === '') setImmediate(flush)
      pending += line
    },
  }
}

/**
 * The logger of the one line each request writes. Its fields are fixed by the app (method,
 * path, status, ms, tenant) and all primitive, so no redaction path can ever match them, while
 * redaction made the line cost about 19 µs instead of 3 (@pinojs/redact tries every wildcard
 * path on every field). Every other line stays redacted. Made once per app, not per request.
 */
export function createRequestLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] })
}
