import { randomUUID } from 'node:crypto'
import type { ConfigIssue, Settings, Tenant } from '@tessera/config-schema'
import type { Clock, GrantDeps } from '@tessera/grants'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import type Koa from 'koa'
import type { Logger } from 'pino'
import { adminApiOptions, createAdminApp } from './admin/admin-app.js'
import { createClientKeys } from './client-keys/client-keys.js'
import { createClientDocuments } from './client-metadata/metadata-documents.js'
import { warnShortClientSecret } from './tenants/client-secret-warning.js'
import type { ClientJwksOptions } from './client-keys/client-keys.js'
import { createApp } from './app.js'
import type { AppDeps } from './app.js'
import { KEY_POLL_INTERVAL_MS } from './keys/key-admin.js'
import { openParseCache } from './startup/parse-cache.js'
import { createMetrics } from './observability/metrics.js'
import type { Metrics } from './observability/metrics.js'
import { createProviderCache } from './providers/scripts.js'
import { createFilesSource } from './sources/files.js'
import type { TenantSource } from './sources/source.js'
import { createServingTarget, createTenantRegistry } from './tenants/registry.js'
import { createTenantBuilder } from './tenants/runtime.js'
import type { TenantRegistry } from './tenants/runtime.js'

export { KEY_POLL_INTERVAL_MS } from './keys/key-admin.js'

/** How long a login form stays usable: long enough to type, short enough to be worthless if leaked. */
const LOGIN_TTL_SECONDS = 600
const PURGE_INTERVAL_MS = 10 * 60_000
/**
 * How long a password check's hold outlives PROVIDER_TIMEOUT_MS: the provider is bounded by it,
 * the store calls around it are not, and a hold that runs out too early lets one more check in.
 */
const THROTTLE_LEASE_MARGIN_MS = 10_000

export interface IssuerOptions {
  settings: Settings
  /** `dev` serves `http://` issuer URLs; `start` serves `https://` ones. */
  mode: 'dev' | 'start'
  logger: Logger
  /** Environment for `{env: VAR}` references in the configuration (and KUBECONFIG). */
  env: Record<string, string | undefined>
  clock?: Clock
  metrics?: Metrics
  /**
   * Follow changes on disk (default false; the CLI turns it on): the files source reloads on
   * any change under TESSERA_CONFIG, the kubernetes source re-imports provider scripts when
   * the provider directory changes. The kubernetes source always watches its Tenant resources.
   */
  watch?: boolean
  /**
   * Files source with KEY_ENCRYPTION_SECRET: store the parse results the first load missed
   * (default true). With `--workers` only worker 1 stores them (the CLI passes false elsewhere).
   */
  storeParseResults?: boolean
  /** Where tenants come from; default: the source TESSERA_CONFIG_SOURCE names. */
  source?: TenantSource
  /**
   * `dev` only (ignored by `start`): the port the tenants' listener is on. A tenant's first host
   * written without a port takes it in the issuer URL (`iss`, metadata, endpoints), on every
   * build, reloads included. Absent, the host is used as written.
   */
  port?: number
  /** How private_key_jwt clients' `jwks_uri` key sets are fetched and cached (defaults apply). */
  clientJwks?: Partial<ClientJwksOptions>
}

/** A composed issuer: the app plus what must be closed on shutdown. */
export interface Issuer {
  /** The tenants' app: the OAuth endpoints on each tenant's hosts, /healthz and /readyz. */
  app: Koa
  /** The admin listener's app: /metrics, /healthz, /readyz and, with ADMIN_TOKEN, /admin (`createAdminApp`). */
  adminApp: Koa
  /** The tenants being served; each accepted change swaps what is behind it. */
  registry: TenantRegistry
  /** The configuration being served. */
  readonly tenants: readonly Tenant[]
  store: Store
  /** Whether the first configuration is loaded (with the store's ping, what /readyz reports). */
  ready(): boolean
  /**
   * Reads the configuration again (SIGHUP). Files: every file is read again and its provider
   * scripts imported afresh; a file with any problem is refused alone (its tenants keep their
   * last good version, or stay absent) and the other files' changes are taken; a reload that
   * would leave no tenant is refused. Kubernetes: the Tenants are listed again and each rebuilt
   * (fresh provider scripts); one that fails keeps its last good version. Every problem is
   * logged as `file:line: field: problem`. Answers whether everything was taken.
   */
  reload(): Promise<boolean>
  close(): Promise<void>
}

/**
 * Loads configuration and providers, opens the store and loads every key ring, then builds the
 * app. With the files source any problem throws before anything listens (nothing partial is
 * ever served); a KEY_ENCRYPTION_SECRET that does not open the stored keys is a `KeyError`
 * `ERR_KEY_DECRYPT` thrown before any key was changed, and in `start` mode an RS256 tenant (or
 * an HS256 tenant with OpenID Connect clients) without KEY_ENCRYPTION_SECRET is a `ConfigError`
 * (see keyEncryptionIssue). With the kubernetes
 * source the store is opened first and the issuer is returned at once: it serves no tenant, and
 * /readyz answers 503, until the first list of Tenant resources has been applied; a Tenant that
 * cannot be served is refused alone. No key is generated before listening: RS256 keys are made
 * on first use, rotations in the background. While running, the store is asked every 5 s which
 * tenants' keys changed, and only their rings are reloaded.
 */
export async function createIssuer(options: IssuerOptions): Promise<Issuer> {
  const { settings, logger } = options
  const clock = options.clock ?? Date.now
  const { open: openStoreOnce, opened } = lazyStore(settings)
  const source = options.source ?? (await createTenantSource(options, openStoreOnce))

  // Requests resolve their tenant through the registry, changed in place in one synchronous step
  // per change, so a request already under way keeps the tenant it started with.
  const served = createTenantRegistry([])
  const registry: TenantRegistry = {
    byHost: (host) => served.byHost(host),
    all: () => served.all(),
  }
  // Shutdown stops the key rings making keys: nothing is generated or written after close.
  const keysStop = new AbortController()
  // One cache of client ID metadata documents for every tenant of the process.
  const clientDocuments = createClientDocuments({
    allowPrivateAddresses: settings.fetchAllowPrivateAddresses,
    now: clock,
    logger,
  })
  const tenants = createTenantBuilder({
    settings,
    mode: options.mode,
    port: options.port,
    now: clock,
    logger,
    openStore: openStoreOnce,
    providers: createProviderCache(),
    served: () => served.all(),
    keySignal: keysStop.signal,
    clientDocuments,
  })
  const target = createServingTarget(served, (all, fresh) => tenants.build(all, fresh))

  let closed = false
  try {
    if (source.listenBeforeLoaded) await openStoreOnce()
    else await source.start(target)
    const store = await openStoreOnce()
    const metrics = options.metrics ?? createMetrics()
    const ready = (): boolean => source.loaded()
    const ping = (): Promise<void> => store.ping()
    const app = createApp({
      registry,
      grants: grantDeps(
        settings,
        store,
        clock,
        createClientKeys(logger, clock, {
          ...options.clientJwks,
          allowPrivateAddresses: settings.fetchAllowPrivateAddresses,
        }),
      ),
      registration: registrationDeps(store, clock),
      logger,
      metrics,
      maxBodyBytes: settings.maxBodyBytes,
      trustProxy: settings.trustProxy,
      ready,
      ping,
      secureCookies: options.mode === 'start',
    })
    const adminApp = createAdminApp({
      registry: metrics.registry,
      logger,
      ready,
      ping,
      ...adminApiOptions(settings, { registry, keys: store.keys, now: clock }),
    })
    // Expired codes, families and marks are dead weight; sweep them now and then.
    const sweep = setInterval(() => {
      store.expiry.purgeExpired(clock()).catch((error: unknown) => {
        logger.warn({ err: error }, 'purging expired rows failed')
      })
    }, PURGE_INTERVAL_MS)
    sweep.unref()
    const keyTimer = setInterval(() => void tenants.pollKeys(), KEY_POLL_INTERVAL_MS)
    keyTimer.unref()
    if (source.listenBeforeLoaded) {
      // Retries until the first configuration is applied; it rejects only when closed first.
      source.start(target).catch((error: unknown) => {
        if (!closed) logger.error({ err: error }, 'the configuration source stopped')
      })
    }
    return {
      app,
      adminApp,
      registry,
      get tenants() {
        return served.all().map((runtime) => runtime.tenant)
      },
      store,
      ready: () => source.loaded(),
      reload: () => source.reload(),
      close: async () => {
        closed = true
        clearInterval(sweep)
        clearInterval(keyTimer)
        keysStop.abort()
        await source.close()
        await target.settled()
        // A key being written finishes before the store closes; queued generations were dropped.
        await Promise.all(registry.all().map((runtime) => runtime.keyRing.idle()))
        await store.close()
      },
    }
  } catch (error) {
    closed = true
    keysStop.abort()
    await source.close()
    await opened()?.close()
    throw error
  }
}

/** What POST /register and the registration client URIs use. */
function registrationDeps(store: Store, clock: () => number): AppDeps['registration'] {
  return {
    registrations: store.clientRegistrations,
    consents: store.consents,
    // Registrations per address are counted in the client-authentication failure table, under
    // keys of their own: one store-backed counter that every replica shares.
    rate: store.clientAuthFailures,
    clock,
  }
}

/** The store, opened on first use (by the first build, or before listening), once. */
function lazyStore(settings: Settings): {
  open: () => Promise<Store>
  opened: () => Store | undefined
} {
  let opening: Promise<Store> | undefined
  let opened: Store | undefined
  return {
    open: () =>
      (opening ??= openStore(settings.databaseUrl, {
        maxConnections: settings.databaseMaxConnections,
      }).then((store) => (opened = store))),
    opened: () => opened,
  }
}

/** The token endpoint's ports and policies: the store's adapters and the settings' limits. */
function grantDeps(
  settings: Settings,
  store: Store,
  clock: Clock,
  clientKeys: GrantDeps['clientKeys'],
): GrantDeps {
  return {
    throttle: store.throttle,
    codes: store.codes,
    refreshTokens: store.refreshTokens,
    marks: store.marks,
    secrets: store.secrets,
    sessions: store.sessions,
    consents: store.consents,
    sessionTtlSeconds: Math.round(settings.sessionTtlHours * 3600),
    clientKeys,
    codeTtlSeconds: settings.authorizationCodeTtlSeconds,
    refreshTokenTtlSeconds: Math.round(settings.refreshTokenExpirationHours * 3600),
    loginTtlSeconds: LOGIN_TTL_SECONDS,
    throttlePolicy: {
      maxFailuresPerUser: settings.passwordMaxFailures,
      maxFailuresPerAddress: settings.passwordMaxFailuresPerAddress,
      windowMs: settings.passwordFailureWindowSeconds * 1000,
      waitMs: settings.providerTimeoutMs,
      leaseMs: settings.providerTimeoutMs + THROTTLE_LEASE_MARGIN_MS,
    },
    clientAuthFailures: store.clientAuthFailures,
    clientAuthPolicy: {
      maxFailures: settings.clientAuthMaxFailures,
      maxFailuresPerAddress: settings.clientAuthMaxFailuresPerAddress,
      windowMs: settings.passwordFailureWindowSeconds * 1000,
    },
    dpopProofMaxAgeSeconds: settings.dpopProofMaxAgeSeconds,
    clock,
    randomId: randomUUID,
  }
}

/** What becomes of a client secret shorter than 16 characters: dev warns, start refuses it. */
function shortSecretsOf(options: IssuerOptions): ((issue: ConfigIssue) => void) | undefined {
  return options.mode === 'dev' ? warnShortClientSecret(options.logger) : undefined
}

/** The source TESSERA_CONFIG_SOURCE names; the Kubernetes client is loaded only when used. */
async function createTenantSource(
  options: IssuerOptions,
  openStoreOnce: () => Promise<Store>,
): Promise<TenantSource> {
  const { settings, logger, env } = options
  if (settings.configSource === 'kubernetes') {
    const { createKubernetesSource } = await import('./sources/kubernetes.js')
    return createKubernetesSource({
      namespace: settings.kubernetesNamespace,
      providerDirectory: settings.config,
      env,
      jwtSecret: settings.jwtSecret,
      shortClientSecrets: shortSecretsOf(options),
      logger,
      watchProviders: options.watch ?? false,
    })
  }
  const secret = settings.keyEncryptionSecret
  const clock = options.clock ?? Date.now
  return createFilesSource({
    path: settings.config,
    env,
    jwtSecret: settings.jwtSecret,
    shortClientSecrets: shortSecretsOf(options),
    logger,
    watch: options.watch ?? false,
    storeParseResults: options.storeParseResults ?? true,
    // Sealed with KEY_ENCRYPTION_SECRET, or not kept at all.
    ...(secret === undefined
      ? {}
      : {
          parseCache: async () =>
            openParseCache((await openStoreOnce()).parsedConfig, secret, clock()),
        }),
  })
}
