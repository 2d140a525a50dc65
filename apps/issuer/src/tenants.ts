import { normaliseHost } from '@tessera/config-schema'
import type { Client, Tenant } from '@tessera/config-schema'
import type { TenantContext, UserAuthenticator } from '@tessera/grants'
import {
  createAccessTokenVerifier,
  createHs256Signer,
  loadKeyRing,
  verifyStoredKeys,
} from '@tessera/keys'
import type { KeyRing, KeyRingEvent, KeyStore, StoredKey, TokenSigner } from '@tessera/keys'
import { corsOrigins } from './http/cors.js'
import { createIdTokenHintVerifier } from './id-token-hint.js'
import { hasOpenIdClients } from './id-token-keys.js'

/** A tenant ready to serve: its grant context, its key ring and its issuer URL. */
export interface TenantRuntime {
  tenant: Tenant
  issuer: string
  context: TenantContext
  keyRing: KeyRing
  /** The origins answered CORS on the browser-facing endpoints (see `corsOrigins`). */
  corsOrigins: ReadonlySet<string>
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
  now: () => number
  keyRotateOnRestart: boolean
  /** KEY_ROTATION_DAYS in milliseconds. */
  keyRotationMs: number
  jwksGraceMs: number
  /** KEY_ENCRYPTION_SECRET, when set. */
  keyEncryptionSecret: string | undefined
  /** What the key rings report: keys made, failed attempts (for the log). */
  onKeyEvent?: (event: KeyRingEvent) => void
  /** Aborted on shutdown: the rings stop making keys. */
  keySignal?: AbortSignal
  users: (tenant: Tenant) => UserAuthenticator
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

/**
 * Builds the runtime of each tenant: key rings are loaded here, from one read of every tenant's
 * keys, before the tenants are served. No key is generated here: an RS256 key (for the access
 * tokens of RS256 tenants, and for the ID tokens of tenants with OpenID Connect clients) is made
 * on first use, and a rotation due on restart in the background, so the issuer listens at once
 * however many tenants it serves.
 *
 * Every tenant's stored keys are checked against KEY_ENCRYPTION_SECRET first: loading a ring
 * writes (it encrypts plaintext keys, retires, prunes), and a wrong secret must stop the start
 * before any tenant's keys were touched.
 */
export async function createTenantRuntimes(
  tenants: readonly Tenant[],
  options: TenantRuntimeOptions,
): Promise<TenantRuntime[]> {
  const hs256Signers = new Map<string, TokenSigner>()
  const hs256Signer = (secret: string): TokenSigner => {
    let signer = hs256Signers.get(secret)
    if (signer === undefined) {
      signer = createHs256Signer(secret)
      hs256Signers.set(secret, signer)
    }
    return signer
  }

  const encryption =
    options.keyEncryptionSecret === undefined
      ? {}
      : { encryptionSecret: options.keyEncryptionSecret }
  // One query for every tenant's keys, not two or three per tenant.
  const stored = new Map<string, StoredKey[]>(tenants.map((tenant) => [tenant.name, []]))
  const rows =
    tenants.length === 0
      ? []
      : await options.keyStore.listKeysOfTenants(tenants.map((tenant) => tenant.name))
  for (const key of rows) stored.get(key.tenant)?.push(key)
  const keysOf = (name: string): StoredKey[] => stored.get(name) ?? []
  for (const tenant of tenants) {
    await verifyStoredKeys({
      tenant: tenant.name,
      store: options.keyStore,
      keys: keysOf(tenant.name),
      ...encryption,
    })
  }

  const runtimes: TenantRuntime[] = []
  for (const tenant of tenants) {
    const idTokens = hasOpenIdClients(tenant)
    const keyRing = await loadKeyRing({
      tenant: tenant.name,
      algorithm: tenant.jwtAlgorithm,
      idTokens,
      store: options.keyStore,
      now: options.now,
      rotateOnRestart: options.keyRotateOnRestart,
      graceMs: options.jwksGraceMs,
      rotationMs: options.keyRotationMs,
      keys: keysOf(tenant.name),
      ...encryption,
      ...(options.onKeyEvent === undefined ? {} : { onEvent: options.onKeyEvent }),
      ...(options.keySignal === undefined ? {} : { signal: options.keySignal }),
    })
    const issuer = issuerUrl(tenant, options.scheme, options.port)
    const secret = tenant.jwtSecret ?? options.jwtSecret
    let signer: TokenSigner
    if (tenant.jwtAlgorithm === 'RS256') {
      // A stable signer: it follows the ring to a rotated key at once (the issuer reloads rings
      // on a short poll).
      signer = keyRing.signer()
    } else {
      // config-schema refuses an HS256 tenant without a usable secret; this is a programming error.
      if (secret === undefined) throw new TypeError(`tenant ${tenant.name} has no HS256 secret`)
      signer = hs256Signer(secret)
    }
    // ID tokens are RS256 at every tenant, signed by the ring's stable signer: at an RS256 tenant
    // the very signer of its access tokens, at an HS256 tenant the key kept for them alone.
    const idTokenSigner = tenant.jwtAlgorithm === 'RS256' || idTokens ? keyRing.signer() : undefined
    const clients = new Map<string, Client>(tenant.clients.map((c) => [c.clientId, c]))
    const runtime: TenantRuntime = {
      tenant,
      issuer,
      keyRing,
      corsOrigins: corsOrigins(tenant),
      context: {
        name: tenant.name,
        issuer,
        audience: tenant.audience ?? issuer,
        clients,
        signer,
        ...(idTokenSigner === undefined ? {} : { idTokenSigner }),
        // Both algorithms verify while the tenant has the means: tokens signed before a switch
        // between HS256 and RS256 stay valid until they expire, and no HS256 token after one.
        verifyAccessToken: createAccessTokenVerifier({
          issuer,
          ring: keyRing,
          now: options.now,
          accessTokenTtlSeconds: options.accessTokenTtlSeconds,
          ...(secret === undefined ? {} : { secret }),
        }),
        verifyIdTokenHint: createIdTokenHintVerifier(issuer, keyRing),
        users: options.users(tenant),
        accessTokenTtlSeconds: options.accessTokenTtlSeconds,
      },
    }
    runtimes.push(runtime)
  }
  return runtimes
}

/**
 * Indexes built tenants by host. The configuration sources guarantee that no two tenants share
 * a host (config-schema's rules); were one repeated, the later tenant would answer for it.
 */
export function createTenantRegistry(runtimes: readonly TenantRuntime[]): TenantRegistry {
  const hosts = new Map<string, TenantRuntime>()
  for (const runtime of runtimes) {
    for (const host of runtime.tenant.hosts) hosts.set(normaliseHost(host), runtime)
  }
  const all = [...runtimes]
  return {
    byHost: (host) => hosts.get(normaliseHost(host)),
    all: () => all,
  }
}
