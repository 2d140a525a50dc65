import type { Level, Logger } from 'pino'
import { createLogger } from '../observability/logger.js'

/** How the CLI writes its log: coloured lines for a person, JSON lines for a machine. */
export type LogFormat = 'pretty' | 'json'

/**
 * `pretty` for `dev` writing to a terminal; `json` otherwise: always under `start`, and under
 * `dev` when its stdout is a pipe or a file, read by a program or kept.
 */
export function logFormatFor(mode: 'dev' | 'start', stdoutIsTty: boolean): LogFormat {
  return mode === 'dev' && stdoutIsTty ? 'pretty' : 'json'
}

/** Options of {@link createConsoleLogger}; both for tests. */
export interface ConsoleLoggerOptions {
  /** Whether stdout is a terminal; default `process.stdout.isTTY`. */
  stdoutIsTty?: boolean
  /** Where lines go; default stdout. */
  destination?: NodeJS.WritableStream
}

/**
 * The logger of `start` and `dev`: the issuer's JSON logger, or in the `pretty` format one
 * coloured line per entry (time, level, message, then its fields), with the same redaction.
 * pino-pretty is imported only then, so `start` never loads it.
 */
export async function createConsoleLogger(
  level: Level | 'silent',
  mode: 'dev' | 'start',
  options: ConsoleLoggerOptions = {},
): Promise<Logger> {
  const tty = options.stdoutIsTty ?? process.stdout.isTTY === true
  if (logFormatFor(mode, tty) === 'json') {
    return createLogger(level, options.destination)
  }
  const { build } = await import('pino-pretty')
  const pretty = build({
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    // Written as logged: the line of a failure just before exit must not be lost.
    sync: true,
    destination: options.destination ?? 1,
  })
  return createLogger(level, pretty)
}
