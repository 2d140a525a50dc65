import type { KeyRing, KeyRingEvent, KeyStore } from '@tessera/keys'
import type { Logger } from 'pino'

/**
 * The key poll of a running issuer: one store query per interval whatever the tenant count.
 * The store's change feed names the tenants whose keys another process (a replica, `tessera
 * keys`, the admin API) wrote since the last poll, and only their rings are reloaded; what time
 * alone changes (a rotation by age, a grace that ends) each ring works out from what it holds.
 */
export interface KeyPoll {
  /**
   * Takes the feed's position, once: call it before the first rings read the store, so that a
   * change made between their read and the first poll is still reported.
   */
  begin(): Promise<void>
  /** One poll: reloads the rings of the tenants that changed, then lets every ring maintain itself. */
  poll(): Promise<void>
}

export function createKeyPoll(options: {
  store: KeyStore
  rings: () => Iterable<KeyRing>
  logger: Logger
}): KeyPoll {
  const { store, logger } = options
  let cursor: Promise<number> | undefined
  let polling: Promise<void> | undefined

  const poll = async (): Promise<void> => {
    if (cursor === undefined) return
    const since = await cursor
    const changes = await store.keyChangesSince(since)
    cursor = Promise.resolve(changes.cursor)
    const changed = new Set(changes.tenants)
    const reloads: Promise<void>[] = []
    for (const ring of options.rings()) {
      if (changed.has(ring.tenant)) reloads.push(reloadKeys(ring, logger))
      else void ring.maintain()
    }
    await Promise.all(reloads)
  }

  return {
    begin: () => {
      cursor ??= store.keyChangeCursor()
      return cursor.then(() => undefined)
    },
    poll: () => {
      // A slow store must not stack polls: one at a time, the next tick skipped meanwhile.
      polling ??= poll()
        .catch((error: unknown) => {
          logger.warn({ err: error }, 'polling key changes failed; serving the keys held')
        })
        .finally(() => {
          polling = undefined
        })
      return polling
    },
  }
}

/**
 * One reload of a tenant's key ring: picks up keys made, rotated or revoked elsewhere, prunes.
 * A failure keeps the ring serving what it had and is logged (never with key material:
 * KeyError messages name tenants and kids only).
 */
async function reloadKeys(ring: KeyRing, logger: Logger): Promise<void> {
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

/** Logs what a key ring reports: keys made here or adopted, and failed attempts. */
export function logKeyEvent(logger: Logger, event: KeyRingEvent): void {
  if (event.type === 'key-made') {
    logger.info(
      { tenant: event.tenant, kid: event.kid, previous: event.previousKid, reason: event.reason },
      'signing key changed',
    )
  } else {
    logger.warn(
      { tenant: event.tenant, reason: event.reason, err: event.error },
      'making a signing key failed; retried on the next need',
    )
  }
}
