import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { parseSettings } from '@tessera/config-schema'
import type { Settings } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { afterAll, beforeAll } from 'vitest'
import { createIssuer, createLogger } from '../../src/index.js'
import type { Issuer, IssuerOptions } from '../../src/index.js'
import type { TenantSource } from '../../src/sources/source.js'

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

export interface RunningIssuer {
  url: string
  issuer: Issuer
  /** Every log line the issuer wrote, as text. */
  logs: string[]
  close(): Promise<void>
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-test-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Starts a real issuer on 127.0.0.1 with a random port, as `tessera dev` would compose it,
 * with its logs captured for assertions.
 */
export async function startIssuer(options: {
  databaseUrl: string
  config?: string
  vars?: Record<string, string>
  clock?: () => number
  /** Timings of the jwks_uri cache of private_key_jwt clients. */
  clientJwks?: IssuerOptions['clientJwks']
  /** The tenant source (default: the one the settings name), e.g. with short retries. */
  source?: (context: {
    settings: Settings
    logger: Logger
    env: Record<string, string>
  }) => TenantSource
}): Promise<RunningIssuer> {
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: options.config ?? join(FIXTURES, 'basic'),
    DATABASE_URL: options.databaseUrl,
    LOG_LEVEL: 'info',
    ...options.vars,
  }
  const settings = parseSettings(vars, 'dev')
  const logs: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'))
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
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await issuer.close()
    },
  }
}

/**
 * Runs an issuer on the `fixture` config, with a SQLite file in a fresh folder, for the tests of
 * the enclosing describe. It exists only once beforeAll has run, hence `onStart` rather than a
 * return value.
 */
export function useIssuer(fixture: string, onStart: (issuer: RunningIssuer) => void): void {
  let issuer: RunningIssuer | undefined
  let tmp: ReturnType<typeof tempDir> | undefined
  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      config: join(FIXTURES, fixture),
    })
    onStart(issuer)
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })
}
