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
    for (const chunk of atomicChunks(text)) stdout.write(chunk)
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
 * What one write(2) to a pipe may carry without being interleaved with another process's writes
 * (POSIX PIPE_BUF on Linux): the workers of `--workers` share their primary's stdout.
 */
const PIPE_ATOMIC_BYTES = 4096

/**
 * `text` (whole lines) cut at line ends into writes of at most {@link PIPE_ATOMIC_BYTES}, so that
 * no other process's line lands inside one of ours; a longer line goes alone.
 */
export function atomicChunks(text: string): string[] {
  if (Buffer.byteLength(text) <= PIPE_ATOMIC_BYTES) return [text]
  const chunks: string[] = []
  let chunk = ''
  let bytes = 0
  for (const line of text.split(/(?<=\n)/)) {
    const size = Buffer.byteLength(line)
    if (bytes + size > PIPE_ATOMIC_BYTES && chunk !== '') {
      chunks.push(chunk)
      chunk = ''
      bytes = 0
    }
    chunk += line
    bytes += size
  }
  if (chunk !== '') chunks.push(chunk)
  return chunks
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
