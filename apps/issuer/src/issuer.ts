import { randomUUID } from 'node:crypto'
import { ConfigError, loadConfig } from '@tessera/config-schema'
import type { Settings, Tenant } from '@tessera/config-schema'
import type { Clock } from '@tessera/grants'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import type Koa from 'koa'
import type { Logger } from 'pino'
import { createApp } from './app.js'
import { createMetrics } from './metrics.js'
import type { Metrics } from './metrics.js'
import { createUserAuthenticator, loadProviders } from './providers.js'
import { createTenantRegistry } from './tenants.js'
import type { TenantRegistry } from './tenants.js'

/** How long a login form stays usable: long enough to type, short enough to be worthless if leaked. */
const LOGIN_TTL_SECONDS = 600
const PURGE_INTERVAL_MS = 10 * 60_000

export interface IssuerOptions {
  settings: Settings
  /** `dev` serves `http://` issuer URLs; `start` serves `https://` ones. */
  mode: 'dev' | 'start'
  logger: Logger
  /** Environment for `{env: VAR}` references in the configuration. */
  env: Record<string, string | undefined>
  clock?: Clock
  metrics?: Metrics
}

/** A composed issuer: the app plus what must be closed on shutdown. */
export interface Issuer {
  app: Koa
  registry: TenantRegistry
  tenants: readonly Tenant[]
  store: Store
  close(): Promise<void>
}

/**
 * Loads configuration and providers, opens the store and loads every key ring, then builds the
 * app. Any problem throws before anything listens (DESIGN §2: nothing partial is ever served).
 */
export async function createIssuer(options: IssuerOptions): Promise<Issuer> {
  const { settings, logger } = options
  const clock = options.clock ?? Date.now
  refuseUnbuiltSettings(settings)
  const tenants = await loadConfig(settings.config, {
    env: options.env,
    jwtSecret: settings.jwtSecret,
  })
  const providers = await loadProviders(tenants.flatMap((tenant) => tenant.providers))
  const store = await openStore(settings.databaseUrl)
  try {
    const registry = await createTenantRegistry(tenants, {
      scheme: options.mode === 'dev' ? 'http' : 'https',
      jwtSecret: settings.jwtSecret,
      accessTokenTtlSeconds: Math.round(settings.tokenExpirationHours * 3600),
      keyStore: store.keys,
      now: clock,
      keyRotateOnRestart: settings.keyRotateOnRestart,
      jwksGraceMs: settings.jwksGraceHours * 3_600_000,
      users: (tenant) => createUserAuthenticator(tenant.providers, providers),
    })
    const app = createApp({
      registry,
      grants: {
        throttle: store.throttle,
        codes: store.codes,
        refreshTokens: store.refreshTokens,
        logins: store.logins,
        codeTtlSeconds: settings.authorizationCodeTtlSeconds,
        refreshTokenTtlSeconds: Math.round(settings.refreshTokenExpirationHours * 3600),
        loginTtlSeconds: LOGIN_TTL_SECONDS,
        throttlePolicy: {
          maxFailuresPerUser: settings.passwordMaxFailures,
          maxFailuresPerAddress: settings.passwordMaxFailuresPerAddress,
          windowMs: settings.passwordFailureWindowSeconds * 1000,
        },
        clock,
        randomId: randomUUID,
      },
      logger,
      metrics: options.metrics ?? createMetrics(),
      maxBodyBytes: settings.maxBodyBytes,
      trustProxy: settings.trustProxy,
      ready: () => true,
      ping: () => store.ping(),
    })
    // Expired codes, login transactions and families are dead weight; sweep them now and then.
    const sweep = setInterval(() => {
      store.expiry.purgeExpired(clock()).catch((error: unknown) => {
        logger.warn({ err: error }, 'purging expired rows failed')
      })
    }, PURGE_INTERVAL_MS)
    sweep.unref()
    return {
      app,
      registry,
      tenants,
      store,
      close: async () => {
        clearInterval(sweep)
        await store.close()
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}

/**
 * Settings whose feature is not built yet are refused rather than ignored: an operator who sets
 * KEY_ENCRYPTION_SECRET must not get plaintext keys while believing otherwise.
 */
function refuseUnbuiltSettings(settings: Settings): void {
  const issues = []
  if (settings.configSource === 'kubernetes') {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'TESSERA_CONFIG_SOURCE',
      message: 'the kubernetes source is not available yet; use files',
    })
  }
  if (settings.keyEncryptionSecret !== undefined) {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'KEY_ENCRYPTION_SECRET',
      message: 'encryption of keys at rest is not available yet; unset it',
    })
  }
  if (issues.length > 0) throw new ConfigError(issues)
}
