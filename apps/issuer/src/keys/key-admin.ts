import type { Tenant } from '@tessera/config-schema'
import { KeyError, readKeys, revokeKey, rotateKey } from '@tessera/keys'
import type { KeyInfo, KeyStore } from '@tessera/keys'
import { hasOpenIdClients, keepsRs256Key } from '../openid/id-token-keys.js'

/**
 * The key operations that `tessera keys list|rotate|revoke` and the admin API share: one
 * implementation, so that both answer the same question the same way. Both print or send what
 * these return; neither adds rules of its own.
 */

/**
 * How often every key ring re-reads the store: a `tessera keys rotate|revoke` run, an admin API
 * call, or another replica's rotation, reaches a running issuer within this time.
 * The same poll rotates keys older than KEY_ROTATION_DAYS and prunes keys past the grace.
 */
export const KEY_POLL_INTERVAL_MS = 5_000

/** How long running issuers take to see a change made here: one key poll. */
export const KEY_PROPAGATION_SECONDS = KEY_POLL_INTERVAL_MS / 1000

/** Stable codes of {@link KeyAdminError}. */
export type KeyAdminErrorCode =
  /** No tenant of that name is configured. */
  | 'ERR_UNKNOWN_TENANT'
  /** The tenant has no key of that kid. */
  | 'ERR_UNKNOWN_KID'
  /** Rotation asked of a tenant that uses no RS256 key: HS256 without OpenID Connect clients. */
  | 'ERR_NOT_RS256'

/** A key request the configuration or the store cannot satisfy; the message is safe to show. */
export class KeyAdminError extends Error {
  override readonly name = 'KeyAdminError'
  readonly code: KeyAdminErrorCode

  constructor(code: KeyAdminErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

/** What the operations need besides the tenant: the store and the settings that shape keys. */
export interface KeyAdminOptions {
  store: KeyStore
  /** JWKS_GRACE_HOURS in milliseconds. */
  graceMs: number
  /** KEY_ENCRYPTION_SECRET, when set: new keys are sealed with it, as a running issuer would. */
  encryptionSecret?: string
  /** Clock, epoch milliseconds. */
  now: () => number
  /**
   * KEY_PUBLISH_AHEAD_SECONDS in milliseconds: a rotation's key is published at once and signs
   * this long after; 0 or omitted signs at once.
   */
  publishAheadMs?: number
}

/** One key as `tessera keys list --json` and `GET /admin/tenants/{t}/keys` show it (ISO 8601, UTC). */
export interface KeyListEntry {
  tenant: string
  kid: string
  state: KeyInfo['state']
  createdAt: string
  /** Active and `next` keys: when they sign (or signed) from. */
  signsFrom?: string
  retiredAt?: string
  publishedUntil?: string
  alg: KeyInfo['alg']
}

/** What a rotation did. */
export interface RotationReport {
  tenant: string
  /** The new active key. */
  kid: string
  /** When it starts signing: now, or KEY_PUBLISH_AHEAD_SECONDS later while another key signs. */
  signsFrom: string
  /**
   * The keys it retired, each published until the grace has passed. Empty when published ahead:
   * the running issuers retire the old key when the new one starts signing.
   */
  retired: { kid: string; publishedUntil: string }[]
}

/** What a revocation did. */
export interface RevocationReport {
  tenant: string
  kid: string
  /** The key's state before; `revoked` means nothing changed. */
  previousState: KeyInfo['state']
  /** Whether anything changed (false when the key was already revoked). */
  changed: boolean
  /**
   * The key made to replace it, when it was the only active key of a tenant that keeps one (RS256,
   * or HS256 with OpenID Connect clients).
   */
  newActiveKid?: string
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString()

/** The configured tenant called `name`. @throws KeyAdminError `ERR_UNKNOWN_TENANT` */
export function findTenant(tenants: readonly Tenant[], name: string): Tenant {
  const tenant = tenants.find((candidate) => candidate.name === name)
  if (tenant === undefined) {
    const known = tenants.map((candidate) => candidate.name).join(', ')
    throw new KeyAdminError(
      'ERR_UNKNOWN_TENANT',
      `unknown tenant "${name}"; the configuration has: ${known}`,
    )
  }
  return tenant
}

/** A tenant's stored keys, oldest first, as metadata: never key material. */
export async function listTenantKeys(
  tenant: Tenant,
  options: Pick<KeyAdminOptions, 'store' | 'graceMs' | 'now'>,
): Promise<KeyListEntry[]> {
  const keys = await readKeys({
    tenant: tenant.name,
    store: options.store,
    graceMs: options.graceMs,
    now: options.now,
  })
  return keys.map((key) => ({
    tenant: key.tenant,
    kid: key.kid,
    state: key.state,
    createdAt: iso(key.createdAt),
    ...(key.signsFrom === undefined ? {} : { signsFrom: iso(key.signsFrom) }),
    ...(key.retiredAt === undefined ? {} : { retiredAt: iso(key.retiredAt) }),
    ...(key.publishedUntil === undefined ? {} : { publishedUntil: iso(key.publishedUntil) }),
    alg: key.alg,
  }))
}

/**
 * Makes a new active RS256 key for `tenant`. With `publishAheadMs` while a key signs, the new key
 * is published at once and signs that long after (the running issuers switch to it then and
 * retire the old one); with `now` (or 0) it signs at once and the previous one is retired now
 * (published for the grace). Same-day rotations get `YYYY-MM-DD.2`, `.3`, ...; a kid is never reused. At an HS256
 * tenant with OpenID Connect clients this is the key of its ID tokens.
 *
 * @throws KeyAdminError `ERR_NOT_RS256` for an HS256 tenant without OpenID Connect clients: it
 * has no key to rotate, and making one would publish a key nothing signs with
 */
export async function rotateTenantKey(
  tenant: Tenant,
  options: KeyAdminOptions,
  rotation: { now?: boolean } = {},
): Promise<RotationReport> {
  if (!keepsRs256Key(tenant)) {
    throw new KeyAdminError(
      'ERR_NOT_RS256',
      `tenant "${tenant.name}" signs with ${tenant.jwtAlgorithm} and has no OpenID Connect ` +
        'clients, so it has no RS256 key to rotate (set jwt_algorithm: RS256 to switch it)',
    )
  }
  const now = options.now()
  const result = await rotateKey({
    tenant: tenant.name,
    store: options.store,
    now: () => now,
    publishAheadMs: rotation.now === true ? 0 : (options.publishAheadMs ?? 0),
    ...encryption(options),
  })
  return {
    tenant: tenant.name,
    kid: result.kid,
    signsFrom: iso(result.signsFrom),
    retired: result.retired.map((kid) => ({ kid, publishedUntil: iso(now + options.graceMs) })),
  }
}

/**
 * Revokes `kid` of `tenant`: it leaves the JWKS at once and never signs again. Revoking the
 * only active key of an RS256 tenant, or of an HS256 tenant with OpenID Connect clients (the key
 * of its ID tokens), makes a replacement; revoking a revoked key changes nothing. Any tenant may
 * revoke, an HS256 tenant without OpenID Connect clients too: a key left from its RS256 days is
 * still published for the grace.
 *
 * @throws KeyAdminError `ERR_UNKNOWN_KID`
 */
export async function revokeTenantKey(
  tenant: Tenant,
  kid: string,
  options: KeyAdminOptions,
): Promise<RevocationReport> {
  // The keys package treats an empty kid as a programming error; here it is a user's input.
  if (kid === '')
    throw new KeyAdminError('ERR_UNKNOWN_KID', `tenant "${tenant.name}" has no key ""`)
  try {
    const result = await revokeKey({
      tenant: tenant.name,
      kid,
      algorithm: tenant.jwtAlgorithm,
      idTokens: hasOpenIdClients(tenant),
      store: options.store,
      now: options.now,
      ...encryption(options),
    })
    return {
      tenant: tenant.name,
      kid,
      previousState: result.previousState,
      changed: result.previousState !== 'revoked',
      ...(result.newActiveKid === undefined ? {} : { newActiveKid: result.newActiveKid }),
    }
  } catch (error) {
    if (error instanceof KeyError && error.code === 'ERR_KEY_NOT_FOUND') {
      throw new KeyAdminError('ERR_UNKNOWN_KID', error.message)
    }
    throw error
  }
}

function encryption(options: KeyAdminOptions): { encryptionSecret?: string } {
  return options.encryptionSecret === undefined
    ? {}
    : { encryptionSecret: options.encryptionSecret }
}
