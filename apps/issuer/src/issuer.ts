import { randomUUID } from 'node:crypto'
import { ConfigError, formatConfigIssue, loadConfig } from '@tessera/config-schema'
import type { Settings, Tenant } from '@tessera/config-schema'
import type { Clock } from '@tessera/grants'
import { MIN_SECRET_LENGTH } from '@tessera/keys'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import type Koa from 'koa'
import type { Logger } from 'pino'
import { createApp } from './app.js'
import { createMetrics } from './metrics.js'
import type { Metrics } from './metrics.js'
import { createUserAuthenticator, loadProviders } from './providers.js'
import { createTenantRegistry } from './tenants.js'
import type { TenantRegistry, TenantRuntime } from './tenants.js'

/** How long a login form stays usable: long enough to type, short enough to be worthless if leaked. */
const LOGIN_TTL_SECONDS = 600
const PURGE_INTERVAL_MS = 10 * 60_000
/**
 * How often every key ring re-reads the store: a `tessera keys rotate|revoke` run, or another
 * replica's rotation, reaches this process within this time (DESIGN §6: a short poll interval).
 * The same poll rotates keys older than KEY_ROTATION_DAYS and prunes keys past the grace.
 */
export const KEY_POLL_INTERVAL_MS = 5_000

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
  /** The tenants being served; a successful `reload` swaps what is behind it. */
  registry: TenantRegistry
  /** The configuration being served. */
  readonly tenants: readonly Tenant[]
  store: Store
  /**
   * Loads the configuration again (SIGHUP, or a change under the config directory). A new
   * configuration with any problem is refused as a whole and the running one stays; every
   * problem is logged as `file:line: field: problem`. Answers whether the new one was taken.
   */
  reload(): Promise<boolean>
  close(): Promise<void>
}

/**
 * Loads configuration and providers, opens the store and loads every key ring, then builds the
 * app. Any problem throws before anything listens (DESIGN §2: nothing partial is ever served);
 * a KEY_ENCRYPTION_SECRET that does not open the stored keys is a `KeyError` `ERR_KEY_DECRYPT`
 * thrown before any key was changed. While running, every key ring is reloaded every 5 s.
 */
export async function createIssuer(options: IssuerOptions): Promise<Issuer> {
  const { settings, logger } = options
  const clock = options.clock ?? Date.now
  checkSettings(settings)
  let generation = 0
  /** Configuration and provider scripts: everything that can be wrong without the store. */
  const readConfiguration = async (): Promise<{
    tenants: Tenant[]
    providers: Awaited<ReturnType<typeof loadProviders>>
  }> => {
    const tenants = await loadConfig(settings.config, {
      env: options.env,
      jwtSecret: settings.jwtSecret,
    })
    const providers = await loadProviders(
      tenants.flatMap((tenant) => tenant.providers),
      generation++,
    )
    return { tenants, providers }
  }
  // Read before the store is opened: a bad configuration stops the start without touching it.
  const initial = await readConfiguration()
  const store = await openStore(settings.databaseUrl)
  /** Key rings and grant contexts for a configuration; throws on any problem. */
  const build = async ({
    tenants,
    providers,
  }: Awaited<ReturnType<typeof readConfiguration>>): Promise<{
    tenants: Tenant[]
    registry: TenantRegistry
  }> => {
    const registry = await createTenantRegistry(tenants, {
      scheme: options.mode === 'dev' ? 'http' : 'https',
      jwtSecret: settings.jwtSecret,
      accessTokenTtlSeconds: Math.round(settings.tokenExpirationHours * 3600),
      keyStore: store.keys,
      now: clock,
      keyRotateOnRestart: settings.keyRotateOnRestart,
      keyRotationMs: settings.keyRotationDays * 86_400_000,
      jwksGraceMs: settings.jwksGraceHours * 3_600_000,
      keyEncryptionSecret: settings.keyEncryptionSecret,
      users: (tenant) => createUserAuthenticator(tenant.providers, providers),
    })
    return { tenants, registry }
  }
  try {
    let current = await build(initial)
    // Requests resolve their tenant through this indirection, so a reload swaps every tenant
    // at once and a request already under way keeps the tenant it started with.
    const registry: TenantRegistry = {
      byHost: (host) => current.registry.byHost(host),
      all: () => current.registry.all(),
    }
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
    const keyPoll = setInterval(() => {
      for (const runtime of registry.all()) void reloadKeys(runtime, logger)
    }, KEY_POLL_INTERVAL_MS)
    keyPoll.unref()
    let reloading: Promise<boolean> = Promise.resolve(true)
    const reload = (): Promise<boolean> => {
      // One reload at a time: a burst of file events must not interleave two builds.
      reloading = reloading.then(async () => {
        try {
          current = await build(await readConfiguration())
        } catch (error) {
          logger.error(
            { problems: describeProblems(error) },
            'configuration reload refused; still serving the previous configuration',
          )
          return false
        }
        logger.info(
          { tenants: current.tenants.map((tenant) => tenant.name) },
          'configuration reloaded',
        )
        return true
      })
      return reloading
    }
    return {
      app,
      registry,
      get tenants() {
        return current.tenants
      },
      store,
      reload,
      close: async () => {
        clearInterval(sweep)
        clearInterval(keyPoll)
        await store.close()
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}

/**
 * One poll of a tenant's key ring: picks up keys rotated or revoked elsewhere, rotates by age,
 * prunes. A failure keeps the ring serving what it had and is logged (never with key material:
 * KeyError messages name tenants and kids only).
 */
async function reloadKeys(runtime: TenantRuntime, logger: Logger): Promise<void> {
  const ring = runtime.keyRing
  const before = ring.activeKid()
  try {
    await ring.reload()
  } catch (error) {
    logger.warn({ tenant: ring.tenant, err: error }, 'reloading keys failed; serving the last good')
    return
  }
  const after = ring.activeKid()
  if (after !== before) {
    logger.info({ tenant: ring.tenant, kid: after, previous: before }, 'signing key changed')
  }
}

/**
 * Settings the issuer cannot honour are refused rather than ignored: the kubernetes source is
 * not built yet, and a short KEY_ENCRYPTION_SECRET would make weak encryption look strong (the
 * key is derived with HKDF, which needs a random secret, not a password).
 *
 * @throws ConfigError listing each refused setting as `environment: NAME: problem`
 */
export function checkSettings(settings: Settings): void {
  const issues = []
  if (settings.configSource === 'kubernetes') {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'TESSERA_CONFIG_SOURCE',
      message: 'the kubernetes source is not available yet; use files',
    })
  }
  if (
    settings.keyEncryptionSecret !== undefined &&
    settings.keyEncryptionSecret.length < MIN_SECRET_LENGTH
  ) {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'KEY_ENCRYPTION_SECRET',
      message: `must be at least ${MIN_SECRET_LENGTH} characters`,
    })
  }
  if (issues.length > 0) throw new ConfigError(issues)
}

/** A refused configuration, one line per problem, for the log. */
function describeProblems(error: unknown): string[] {
  if (error instanceof ConfigError) return error.issues.map(formatConfigIssue)
  if (error instanceof Error) return error.message.split('\n')
  return [String(error)]
}
