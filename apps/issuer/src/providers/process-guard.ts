import type { Logger } from 'pino'

// Taken when this module loads, before `guardProcess` replaces the public ones.
const realExit = process.exit.bind(process)

/** What `process.exit` and `process.abort` throw once {@link guardProcess} has run. */
export class ProcessExitRefusedError extends Error {
  override readonly name = 'ProcessExitRefusedError'
}

/**
 * Ends the process with `code`: the issuer's own way out, which {@link guardProcess} leaves
 * open while it refuses `process.exit` to everything else (provider scripts above all).
 */
export function exitProcess(code: number): never {
  return realExit(code)
}

/**
 * What a stray error is, fit for the log: its class name and the first stack frames (files and
 * lines), never its message, which a provider script may have built from the password it was
 * given. The stack is read from the end of the message's text, so that a message spanning lines
 * that look like frames cannot slip through.
 */
export function describeStray(reason: unknown): { kind: string; at?: string[] } {
  try {
    if (!(reason instanceof Error)) return { kind: reason === null ? 'null' : typeof reason }
    const kind = typeof reason.name === 'string' ? reason.name.slice(0, 100) : 'Error'
    const stack = typeof reason.stack === 'string' ? reason.stack : ''
    const message = typeof reason.message === 'string' ? reason.message : ''
    const end = message === '' ? 0 : stack.indexOf(message)
    const frames = end < 0 ? '' : stack.slice(end + message.length)
    const at = frames
      .split('\n')
      .filter((line) => /^\s+at /.test(line))
      .slice(0, 5)
      .map((line) => line.trim())
    return { kind, at }
  } catch {
    // A getter or proxy that throws while it is read.
    return { kind: 'a value that could not be read' }
  }
}

/** Whether the caller of the function that calls this one is Node's own cluster code. */
function calledByNodeCluster(): boolean {
  // Frames: this function, the replaced process.exit, its caller.
  const caller = (new Error().stack ?? '').split('\n')[3] ?? ''
  return /^\s+at (.* \()?node:internal\/cluster\//.test(caller)
}

/**
 * Keeps one provider script's mistake from ending the process, and every tenant with it, with
 * the password it was given printed on the way out:
 *
 * - an exception nothing caught (thrown from a timer or an event listener) and a rejected
 *   promise nothing handled are logged as {@link describeStray} describes them, and the issuer
 *   serves on;
 * - `process.exit` and `process.abort` throw a {@link ProcessExitRefusedError} (inside a
 *   provider call this fails the call like any other throw); the issuer exits through
 *   {@link exitProcess}, and Node's cluster code, which ends a worker whose primary is gone,
 *   through process.exit still.
 *
 * Not contained: a busy loop, memory exhaustion, `process.kill` and native crashes; a script that
 * must be isolated from the process belongs behind a service of its own.
 */
export function guardProcess(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.error(describeStray(reason), 'a promise was rejected and nothing handled it')
  })
  process.on('uncaughtException', (error) => {
    logger.error(describeStray(error), 'an exception was thrown and nothing caught it')
  })
  const refuse = (call: string): never => {
    logger.error({ call }, 'a script called a function that ends the process: refused')
    throw new ProcessExitRefusedError(`${call} is refused: the issuer ends only on a signal`)
  }
  process.exit = (code?: number | string | null): never => {
    // Node's own cluster code ends a worker this way when its primary is gone.
    if (calledByNodeCluster()) return realExit(code)
    return refuse('process.exit')
  }
  process.abort = (): never => refuse('process.abort')
}
