import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { OAuthError } from '../errors.js'
import type { Clock, SecretStore } from '../ports.js'

/** The store secret the nonces are derived from, the same for every replica. */
const SECRET_NAME = 'dpop-nonce'
const KEY_BYTES = 32

/**
 * How long one nonce is current. A nonce stays accepted through the next window too, so it
 * lives between 5 and 10 minutes: a client that got one keeps using it without a retry.
 */
export const DPOP_NONCE_WINDOW_SECONDS = 300

const keys = new WeakMap<SecretStore, Promise<Buffer>>()

/**
 * The nonce key, read (or created) once per process and store. A failed read is not remembered:
 * the next request tries again.
 */
function nonceKey(secrets: SecretStore): Promise<Buffer> {
  let key = keys.get(secrets)
  if (key === undefined) {
    const candidate = randomBytes(KEY_BYTES).toString('base64url')
    key = secrets
      .getOrCreateSecret(SECRET_NAME, candidate)
      .then((value) => Buffer.from(value, 'base64url'))
    keys.set(secrets, key)
    const pending = key
    pending.catch(() => {
      if (keys.get(secrets) === pending) keys.delete(secrets)
    })
  }
  return key
}

function nonceOf(key: Buffer, tenant: string, window: number): string {
  return createHmac('sha256', key).update(`${tenant}\n${window}`).digest('base64url')
}

function windowAt(now: number): number {
  return Math.floor(now / 1000 / DPOP_NONCE_WINDOW_SECONDS)
}

/**
 * The tenant's current DPoP nonce (RFC 9449 §8): an HMAC of the tenant and the time window under
 * a key kept in the store, so every replica computes the same nonce and accepts the others'.
 */
export async function currentDpopNonce(
  tenant: string,
  deps: { secrets: SecretStore; clock: Clock },
): Promise<string> {
  return nonceOf(await nonceKey(deps.secrets), tenant, windowAt(deps.clock()))
}

/**
 * Refuses a proof's `nonce` unless it is the tenant's nonce of the current or the previous
 * window.
 *
 * @throws OAuthError `use_dpop_nonce`, carrying the current nonce
 */
export async function checkDpopNonce(
  nonce: unknown,
  tenant: string,
  deps: { secrets: SecretStore; clock: Clock },
): Promise<void> {
  const key = await nonceKey(deps.secrets)
  const window = windowAt(deps.clock())
  const current = nonceOf(key, tenant, window)
  if (typeof nonce === 'string') {
    for (const accepted of [current, nonceOf(key, tenant, window - 1)]) {
      const a = Buffer.from(nonce)
      const b = Buffer.from(accepted)
      if (a.length === b.length && timingSafeEqual(a, b)) return
    }
  }
  throw new OAuthError(
    'use_dpop_nonce',
    nonce === undefined
      ? 'the DPoP proof must carry the server nonce'
      : "the DPoP proof's nonce is not current",
    { dpopNonce: current },
  )
}
