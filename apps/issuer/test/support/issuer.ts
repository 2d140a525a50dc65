import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { parseSettings } from '@tessera/config-schema'
import type { Settings } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { afterAll, beforeAll } from 'vitest'
import { createIssuer, createLogger } from '../../src/index.js'
import type { Issuer, IssuerOptions, TenantSource } from '../../src/index.js'
import { CLI } from './cli.js'

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))
export const JWT_SECRET = 'test-secret-0123456789-abcdefghijklmnop'

export const HS = {
  host: 'hs.test',
  issuer: 'http://hs.test',
  client: '11111111-1111-4111-8111-111111111111',
  secret: 'hs-client-secret',
  publicPasswordClient: '33333333-3333-4333-8333-333333333333',
  codeOnlyClient: '22222222-2222-4222-8222-222222222222',
}
export const RS = {
  host: 'rs.test',
  issuer: 'http://rs.test',
  audience: 'https://api.rs.test',
  client: '44444444-4444-4444-8444-444444444444',
  secret: 'rs-client-secret',
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-test-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * How a test runs an issuer. Without `command` it runs in the test's process, composed as
 * `tessera dev` composes it, so that a test can hand it a clock or a tenant source and look at
 * its registry; with `command` it runs the built CLI in a child process, as an operator would.
 */
export interface StartOptions {
  /** `tessera dev` or `tessera start --port 0 --host 127.0.0.1` in a child process. */
  command?: 'dev' | 'start'
  /** TESSERA_CONFIG: a folder of test/fixtures by name, or a path (default: `basic`). */
  config?: string
  /** DATABASE_URL (default: a SQLite file in a fresh folder, removed by `close`). */
  databaseUrl?: string
  /** A child process's arguments after the command (default: `--port 0 --host 127.0.0.1`). */
  args?: string[]
  /** A child process's working directory (default: the test's). */
  cwd?: string
  /** WORKERS, for `start`. */
  workers?: number
  /**
   * More environment over the defaults: JWT_SECRET, TESSERA_CONFIG, DATABASE_URL, LOG_LEVEL=info,
   * WORKERS and, for a child process, PATH and ADMIN_PORT=0 (processes started side by side must
   * not race for the default admin port).
   */
  vars?: Record<string, string>
  /**
   * The environment of a child process as a whole, replacing the defaults except PATH,
   * LOG_LEVEL=info and ADMIN_PORT=0 (which it may set): for tests of the CLI without a setting.
   */
  env?: Record<string, string>
  /** In this process: the clock of the issuer. */
  clock?: () => number
  /** In this process: timings of the jwks_uri cache of private_key_jwt clients. */
  clientJwks?: IssuerOptions['clientJwks']
  /** In this process: the tenant source (default: the one the settings name). */
  source?: (context: {
    settings: Settings
    logger: Logger
    env: Record<string, string>
  }) => TenantSource
}

/** An issuer serving on 127.0.0.1 at a free port. */
export interface RunningIssuer {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** Every line it logged so far, oldest first. */
  logs: string[]
  /** The lines of `logs` that are JSON, parsed. */
  entries(): Record<string, unknown>[]
  /** Stops it (SIGTERM for a process) and removes the folder of its default database. */
  close(): Promise<void>
  /** Stops it and starts it again on the same database, with these options changed. */
  restart(changes?: Partial<StartOptions>): Promise<void>
}

/** An issuer in the test's process. */
export interface InProcessIssuer extends RunningIssuer {
  issuer: Issuer
}

/** A `tessera` process: one replica, as an operator runs it. */
export interface IssuerProcess extends RunningIssuer {
  /** The admin listener's `http://<ADMIN_HOST>:<port>`, or `off`. */
  admin: string
  child: ChildProcess
  /** The exit code once the process ends (null when a signal ended it). */
  exited: Promise<number | null>
  /** SIGKILL, then waits for the exit: a replica that dies without finishing anything. */
  kill(): Promise<void>
}

type Started<O extends StartOptions> = O extends { command: 'dev' | 'start' }
  ? IssuerProcess
  : InProcessIssuer

interface Running {
  url: string
  logs: string[]
  stop: () => Promise<void>
  issuer?: Issuer
  admin?: string
  child?: ChildProcess
  exited?: Promise<number | null>
  kill?: () => Promise<void>
}

/** Starts an issuer; it listens once this resolves. */
export async function startIssuer<O extends StartOptions>(options: O): Promise<Started<O>> {
  let current = options as StartOptions
  let folder: ReturnType<typeof tempDir> | undefined
  const start = (): Promise<Running> => {
    if (current.databaseUrl === undefined && current.env === undefined) folder ??= tempDir()
    const databaseUrl = current.databaseUrl ?? `sqlite:${folder?.dir}/tessera.db`
    return current.command === undefined
      ? startInProcess(current, environment(current, databaseUrl))
      : startProcess(current, environment(current, databaseUrl))
  }
  let running = await start()
  const handle = {
    entries: () => parseEntries(handle.logs),
    close: async (): Promise<void> => {
      await running.stop()
      folder?.remove()
    },
    restart: async (changes: Partial<StartOptions> = {}): Promise<void> => {
      await running.stop()
      current = { ...current, ...changes }
      running = await start()
      adopt(running)
    },
  } as RunningIssuer & Omit<Running, 'stop'>
  const adopt = (fields: Running): void => {
    const { url, logs, issuer, admin, child, exited, kill } = fields
    Object.assign(handle, { url, logs, issuer, admin, child, exited, kill })
  }
  adopt(running)
  return handle as unknown as Started<O>
}

/**
 * Runs an issuer for the tests of the enclosing describe: started in beforeAll (with the options
 * `options` answers then, when it is a function), closed in afterAll. What it answers is a view
 * of that issuer, usable from beforeAll on.
 */
export function useIssuer<O extends StartOptions = Record<never, never>>(
  options: O | (() => O | Promise<O>) = {} as O,
): Started<O> {
  let started: RunningIssuer | undefined
  beforeAll(async () => {
    started = await startIssuer(typeof options === 'function' ? await options() : options)
  })
  afterAll(async () => {
    await started?.close()
  })
  return new Proxy({} as Started<O>, {
    get(_target, key) {
      if (started === undefined) throw new Error('the issuer of useIssuer starts in beforeAll')
      const value: unknown = Reflect.get(started, key)
      return typeof value === 'function' ? (value as () => unknown).bind(started) : value
    },
  })
}

function environment(options: StartOptions, databaseUrl: string): Record<string, string> {
  if (options.env !== undefined) return options.env
  const config = options.config ?? 'basic'
  return {
    JWT_SECRET,
    TESSERA_CONFIG: isAbsolute(config) ? config : join(FIXTURES, config),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    ...(options.workers === undefined ? {} : { WORKERS: String(options.workers) }),
    ...options.vars,
  }
}

/** The lines of `logs` that are JSON, parsed. */
function parseEntries(logs: string[]): Record<string, unknown>[] {
  return logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>]
    } catch {
      return []
    }
  })
}

async function startInProcess(options: StartOptions, vars: Record<string, string>) {
  const settings = parseSettings(vars, 'dev')
  const logs: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').slice(0, -1))
      done()
    },
  })
  const logger = createLogger(settings.logLevel, sink)
  const issuer = await createIssuer({
    settings,
    mode: 'dev',
    logger,
    env: vars,
    clock: options.clock,
    clientJwks: options.clientJwks,
    source: options.source?.({ settings, logger, env: vars }),
  })
  const server: Server = issuer.app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    issuer,
    logs,
    async stop() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await issuer.close()
    },
  }
}

/** Runs the CLI's command and resolves once it logs `tessera issuer listening`. */
async function startProcess(options: StartOptions, vars: Record<string, string>) {
  const args = options.args ?? ['--port', '0', '--host', '127.0.0.1']
  const child = spawn(process.execPath, [CLI, options.command ?? 'dev', ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ADMIN_PORT: '0', ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  })
  const logs: string[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let buffered = ''
    stream?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      logs.push(...lines)
    })
  }
  collect(child.stdout)
  collect(child.stderr)
  const signal = async (name: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name)
    await exited
  }
  const { url, admin } = await new Promise<{ url: string; admin: string }>((resolve, reject) => {
    const timer = setInterval(() => {
      const listening = parseEntries(logs).find(
        (entry) => entry.msg === 'tessera issuer listening' && typeof entry.url === 'string',
      )
      if (listening === undefined) return
      clearInterval(timer)
      resolve({ url: listening.url as string, admin: (listening.admin as string) ?? 'off' })
    }, 20)
    void exited.then(() => {
      clearInterval(timer)
      reject(new Error(`the issuer exited with ${child.exitCode}:\n${logs.join('\n')}`))
    })
  })
  return {
    url,
    admin,
    child,
    exited,
    logs,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  }
}
