import { ConfigError } from '@tessera/config-schema'
import type { Client, Settings, Tenant } from '@tessera/config-schema'
import type {
  ClientRegistrationStore,
  Clock,
  TenantContext,
  UserAuthenticator,
} from '@tessera/grants'
import {
  createAccessTokenVerifier,
  hs256SwitchTime,
  loadKeyRing,
  recordTenantAlgorithms,
  verifyStoredKeys,
} from '@tessera/keys'
import type {
  KeyRing,
  KeyRingEvent,
  KeyStore,
  StoredKey,
  TenantAlgorithmRecord,
  TenantAlgorithmStore,
  TokenSigner,
} from '@tessera/keys'
import type { Store } from '@tessera/store'
import type { Logger } from 'pino'
import type { ClientDocuments } from '../client-metadata/metadata-documents.js'
import { createSwitchingSigner } from '../keys/algorithm-switch.js'
import { corsOrigins } from '../http/cors.js'
import { createIdTokenHintVerifier } from '../openid/id-token-hint.js'
import { hasOpenIdClients } from '../openid/id-token-keys.js'
import { keyEncryptionIssue } from '../keys/key-encryption.js'
import { createKeyPoll, logKeyEvent } from '../keys/key-poll.js'
import type { KeyPoll } from '../keys/key-poll.js'
import { createUserAuthenticator } from '../providers/scripts.js'
import type { ProviderCache } from '../providers/scripts.js'
import { tenantDynamicClients } from './dynamic-clients.js'
import { sharedHs256Signers } from '../keys/hs256-signers.js'

/** A tenant ready to serve: its grant context, its key ring and its issuer URL. */
export interface TenantRuntime {
  tenant: Tenant
  issuer: string
  readonly context: TenantContext
  keyRing: KeyRing
  /** The origins answered CORS on the browser-facing endpoints (see `corsOrigins`). */
  readonly corsOrigins: ReadonlySet<string>
}

/** The served tenants, looked up by the Host header. */
export interface TenantRegistry {
  byHost(host: string): TenantRuntime | undefined
  all(): readonly TenantRuntime[]
}

export interface TenantRuntimeOptions {
  /** The scheme of the tenants' issuer URLs: `https` in production, `http` in dev. */
  scheme: 'http' | 'https'
  /**
   * `dev` only: the port the tenants' listener is on, given to every host written without a
   * port. Absent (`start`), the issuer URL is the first host exactly as written.
   */
  port?: number
  jwtSecret: string | undefined
  accessTokenTtlSeconds: number
  keyStore: KeyStore
  /**
   * Each tenant's signing-algorithm history, updated here at every start and reload. Omitted:
   * no RS256 tenant takes an HS256 token, and a switch from HS256 signs RS256 at once.
   */
  algorithmStore?: TenantAlgorithmStore
  now: () => number
  keyRotateOnRestart: boolean
  /** KEY_ROTATION_DAYS in milliseconds. */
  keyRotationMs: number
  /** KEY_PUBLISH_AHEAD_SECONDS in milliseconds. */
  keyPublishAheadMs?: number
  jwksGraceMs: number
  /** KEY_ENCRYPTION_SECRET, when set. */
  keyEncryptionSecret: string | undefined
  /** What the key rings report: keys made, failed attempts (for the log). */
  onKeyEvent?: (event: KeyRingEvent) => void
  /** Aborted on shutdown: the rings stop making keys. */
  keySignal?: AbortSignal
  users: (tenant: Tenant) => UserAuthenticator
  /**
   * The registered clients of every tenant (RFC 7591), for the tenants with `dynamic_clients`.
   * Omitted: no registered client is found.
   */
  registrations?: ClientRegistrationStore
  /** The client ID metadata documents of the process, for tenants that accept them. */
  clientDocuments?: ClientDocuments
}

/**
 * The issuer URL: scheme + the tenant's first host, so it is stable whichever host served. With
 * `port` (`dev`), a first host written without a port takes it: `acme.localhost` served on port
 * 3100 issues `http://acme.localhost:3100`; a host that names its port keeps it.
 */
export function issuerUrl(tenant: Tenant, scheme: 'http' | 'https', port?: number): string {
  const host = tenant.hosts[0] ?? ''
  if (port === undefined || hasPort(host)) return `${scheme}://${host}`
  // A bare IPv6 literal (more than one colon, no brackets) goes in brackets before a port.
  const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return `${scheme}://${name}:${port}`
}

/** Whether a host as written names a port: `name:port` or `[v6]:port`. */
function hasPort(host: string): boolean {
  if (host.startsWith('[')) return /^\[[^\]]*\]:\d+$/.test(host)
  return /^[^:]*:\d+$/.test(host)
}

/** What building tenants takes from the issuer around it. */
export interface TenantBuilderOptions {
  settings: Settings
  mode: 'dev' | 'start'
  /** `dev` only: the tenants' listening port (see {@link issuerUrl}). */
  port?: number | undefined
  now: Clock
  logger: Logger
  /** The store, opened on first use: a build refused for its keys opens nothing. */
  openStore: () => Promise<Store>
  providers: ProviderCache
  /** The runtimes being served: the rings the key poll reloads. */
  served: () => readonly TenantRuntime[]
  /** Aborted on shutdown: the rings stop making keys. */
  keySignal: AbortSignal
  /** The client ID metadata documents of the process, for tenants that accept them. */
  clientDocuments?: ClientDocuments
}

/** Builds tenants for the issuer, and polls the store for the keys of those it serves. */
export interface TenantBuilder {
  /**
   * Provider scripts, key rings and grant contexts for `tenants`; throws on any problem. `fresh`
   * (default true) imports every provider script afresh.
   */
  build(tenants: readonly Tenant[], fresh?: boolean): Promise<TenantRuntime[]>
  /** One key poll: reloads the rings whose keys another process changed (none before a build). */
  pollKeys(): Promise<void>
}

/** The issuer's tenant builder over its settings, store and provider cache. */
export function createTenantBuilder(options: TenantBuilderOptions): TenantBuilder {
  const { settings, logger } = options
  let keyPoll: KeyPoll | undefined
  return {
    async build(tenants, fresh = true) {
      // First: a tenant refused for its keys loads no script and opens no store.
      const unsealed = keyEncryptionIssue(tenants, settings.keyEncryptionSecret, options.mode)
      if (unsealed !== undefined) throw new ConfigError([unsealed])
      // Before the store is opened (but for reading parse results): a script that does not load
      // stops the start without changing it.
      const providers = await options.providers.modulesFor(tenants, fresh)
      const store = await options.openStore()
      // The change feed's position before the first rings read their keys: nothing in between is
      // missed by the poll.
      keyPoll ??= createKeyPoll({
        store: store.keys,
        rings: () => options.served().map((runtime) => runtime.keyRing),
        logger,
      })
      await keyPoll.begin()
      // Tenants with the same provider scripts share one authenticator: thousands of tenants
      // usually name the same few scripts.
      const authenticators = new Map<string, UserAuthenticator>()
      const users = (tenant: Tenant): UserAuthenticator => {
        const key = tenant.providers.join('\n')
        let authenticator = authenticators.get(key)
        if (authenticator === undefined) {
          authenticator = createUserAuthenticator(tenant.providers, providers, {
            timeoutMs: settings.providerTimeoutMs,
          })
          authenticators.set(key, authenticator)
        }
        return authenticator
      }
      return createTenantRuntimes(tenants, {
        scheme: options.mode === 'dev' ? 'http' : 'https',
        ...(options.mode === 'dev' && options.port !== undefined ? { port: options.port } : {}),
        jwtSecret: settings.jwtSecret,
        accessTokenTtlSeconds: Math.round(settings.tokenExpirationHours * 3600),
        keyStore: store.keys,
        algorithmStore: store.algorithms,
        now: options.now,
        keyRotateOnRestart: settings.keyRotateOnRestart,
        keyRotationMs: settings.keyRotationDays * 86_400_000,
        keyPublishAheadMs: settings.keyPublishAheadSeconds * 1000,
        jwksGraceMs: settings.jwksGraceHours * 3_600_000,
        keyEncryptionSecret: settings.keyEncryptionSecret,
        onKeyEvent: (event) => logKeyEvent(logger, event),
        keySignal: options.keySignal,
        users,
        registrations: store.clientRegistrations,
        ...(options.clientDocuments === undefined
          ? {}
          : { clientDocuments: options.clientDocuments }),
      })
    },
    pollKeys: () => keyPoll?.poll() ?? Promise.resolve(),
  }
}

/**
 * Builds the runtime of each tenant: key rings are loaded here, from the tenants' stored keys
 * read {@link KEY_BATCH} tenants per query, before the tenants are served. No key is generated
 * here: an RS256 key (for the access tokens of RS256 tenants, and for the ID tokens of tenants
 * with OpenID Connect clients) is made on first use, and a rotation due on restart in the
 * background, so the issuer listens at once however many tenants it serves.
 *
 * Every tenant's stored keys are checked against KEY_ENCRYPTION_SECRET first: loading a ring
 * writes (it encrypts plaintext keys, retires, prunes), and a wrong secret must stop the start
 * before any tenant's keys were touched.
 */
export async function createTenantRuntimes(
  tenants: readonly Tenant[],
  options: TenantRuntimeOptions,
): Promise<TenantRuntime[]> {
  const hs256Signer = sharedHs256Signers()

  const encryption =
    options.keyEncryptionSecret === undefined
      ? {}
      : { encryptionSecret: options.keyEncryptionSecret }
  const keyOptions = (tenant: Tenant) => ({
    tenant: tenant.name,
    algorithm: tenant.jwtAlgorithm,
    idTokens: hasOpenIdClients(tenant),
    store: options.keyStore,
    now: options.now,
    rotateOnRestart: options.keyRotateOnRestart,
    graceMs: options.jwksGraceMs,
    rotationMs: options.keyRotationMs,
    publishAheadMs: options.keyPublishAheadMs ?? 0,
    ...encryption,
    ...(options.onKeyEvent === undefined ? {} : { onEvent: options.onKeyEvent }),
    ...(options.keySignal === undefined ? {} : { signal: options.keySignal }),
  })

  // Every key is proved to open before any ring loads; the stored rows (several KB a key) are
  // read a batch of tenants at a time, twice, rather than held for the whole start: ten thousand
  // tenants' keys held at once end up as garbage the process keeps as resident memory.
  const verifiedKids = new Map<string, string>()
  for await (const batch of keysInBatches(tenants, options.keyStore)) {
    for (const [tenant, keys] of batch) {
      await verifyStoredKeys({ tenant: tenant.name, store: options.keyStore, keys, ...encryption })
      verifiedKids.set(tenant.name, kidsOf(keys))
    }
  }

  const runtimes: TenantRuntime[] = []
  for await (const batch of keysInBatches(tenants, options.keyStore)) {
    const records = await algorithmRecords(batch, options)
    for (const [tenant, keys] of batch) {
      const record = records.get(tenant.name)
      // Switched from HS256 and not signing RS256 yet: the first key is made and published now.
      const switching = (hs256SwitchTime(record) ?? -Infinity) > options.now()
      const keyRing = await loadKeyRing({
        ...keyOptions(tenant),
        ...(switching ? { firstKeyAhead: true } : {}),
        keys,
        // Unless another process changed the tenant's keys between the two reads.
        keysVerified: verifiedKids.get(tenant.name) === kidsOf(keys),
      })
      const secret = tenant.jwtSecret ?? options.jwtSecret
      // config-schema refuses an HS256 tenant without a usable secret: a programming error.
      if (tenant.jwtAlgorithm === 'HS256' && secret === undefined) {
        throw new TypeError(`tenant ${tenant.name} has no HS256 secret`)
      }
      runtimes.push(new ServedTenantRuntime(tenant, keyRing, options, hs256Signer, record))
    }
  }
  return runtimes
}

/** The batch's algorithm records, brought up to their configured algorithms. */
async function algorithmRecords(
  batch: readonly [Tenant, StoredKey[]][],
  options: TenantRuntimeOptions,
): Promise<Map<string, TenantAlgorithmRecord>> {
  if (options.algorithmStore === undefined) return new Map()
  return recordTenantAlgorithms({
    store: options.algorithmStore,
    tenants: batch.map(([tenant]) => ({ name: tenant.name, algorithm: tenant.jwtAlgorithm })),
    now: options.now(),
    publishAheadMs: options.keyPublishAheadMs ?? 0,
  })
}

/** Tenants read for their keys per query: one query per batch, not two or three per tenant. */
const KEY_BATCH = 500

/** Every tenant with its stored keys, read {@link KEY_BATCH} tenants per store query. */
async function* keysInBatches(
  tenants: readonly Tenant[],
  store: KeyStore,
): AsyncGenerator<[Tenant, StoredKey[]][]> {
  for (let start = 0; start < tenants.length; start += KEY_BATCH) {
    const batch = tenants.slice(start, start + KEY_BATCH)
    const stored = new Map<string, StoredKey[]>(batch.map((tenant) => [tenant.name, []]))
    for (const key of await store.listKeysOfTenants(batch.map((tenant) => tenant.name))) {
      stored.get(key.tenant)?.push(key)
    }
    yield batch.map((tenant) => [tenant, stored.get(tenant.name) ?? []])
  }
}

/** The kids of a tenant's keys, to tell whether they changed between two reads. */
function kidsOf(keys: readonly StoredKey[]): string {
  return keys.map((key) => key.kid).join('\n')
}

/** An HS256 signer per secret, made once and shared by every tenant of that secret. */
/**
 * A tenant's runtime. The grant context and the CORS origins are made on the tenant's first
 * request: of ten thousand tenants most are idle, and their verifiers, client maps and origin
 * sets would cost memory for as long as the issuer runs. Nothing in them can fail to build.
 * A class, not closures in `createTenantRuntimes`: a closure there would keep that function's
 * whole scope (every tenant's stored keys) alive with each tenant.
 */
class ServedTenantRuntime implements TenantRuntime {
  readonly issuer: string
  #context: TenantContext | undefined
  #corsOrigins: ReadonlySet<string> | undefined

  constructor(
    readonly tenant: Tenant,
    readonly keyRing: KeyRing,
    private readonly options: TenantRuntimeOptions,
    private readonly hs256Signer: (secret: string) => TokenSigner,
    /** The tenant's algorithm record as this start or reload left it. */
    private readonly algorithmRecord: TenantAlgorithmRecord | undefined,
  ) {
    this.issuer = issuerUrl(tenant, options.scheme, options.port)
  }

  get corsOrigins(): ReadonlySet<string> {
    return (this.#corsOrigins ??= corsOrigins(this.tenant))
  }

  get context(): TenantContext {
    return (this.#context ??= this.#makeContext())
  }

  #makeContext(): TenantContext {
    const { tenant, keyRing, issuer, options } = this
    const secret = tenant.jwtSecret ?? options.jwtSecret
    // RS256: a stable signer, which follows the ring to a rotated key at once (the issuer
    // reloads rings on a short poll). HS256: one signer per secret, shared by its tenants.
    const rs256Since = hs256SwitchTime(this.algorithmRecord)
    const signer =
      tenant.jwtAlgorithm === 'HS256'
        ? this.hs256Signer(secret ?? '')
        : rs256Since !== undefined && secret !== undefined && options.now() < rs256Since
          ? createSwitchingSigner(
              this.hs256Signer(secret),
              keyRing.signer(),
              rs256Since,
              options.now,
            )
          : keyRing.signer()
    // ID tokens are RS256 at every tenant, signed by the ring's stable signer: at an RS256 tenant
    // the very signer of its access tokens, at an HS256 tenant the key kept for them alone.
    const idTokenSigner =
      tenant.jwtAlgorithm === 'RS256' || hasOpenIdClients(tenant) ? keyRing.signer() : undefined
    return {
      name: tenant.name,
      issuer,
      audience: tenant.audience ?? issuer,
      clients: new Map<string, Client>(tenant.clients.map((c) => [c.clientId, c])),
      ...(tenant.resources === undefined ? {} : { resources: tenant.resources }),
      signer,
      ...(idTokenSigner === undefined ? {} : { idTokenSigner }),
      // Both algorithms verify while the tenant has the means: tokens signed before a switch
      // between HS256 and RS256 stay valid until they expire, and no HS256 token after one.
      verifyAccessToken: createAccessTokenVerifier({
        issuer,
        ring: keyRing,
        now: options.now,
        accessTokenTtlSeconds: options.accessTokenTtlSeconds,
        rs256Since: () => rs256Since,
        ...(secret === undefined ? {} : { secret }),
      }),
      verifyIdTokenHint: createIdTokenHintVerifier(issuer, keyRing),
      ...tenantDynamicClients(tenant, options),
      users: options.users(tenant),
      accessTokenTtlSeconds: options.accessTokenTtlSeconds,
      ...(tenant.dpopNonce === true ? { dpopNonce: true } : {}),
    }
  }
}
