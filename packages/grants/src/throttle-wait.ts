import type {
  ReservationTerms,
  Reservation,
  Settlement,
  ThrottleLimit,
  ThrottleStore,
} from './ports.js'

/**
 * How often a waiting attempt asks the store again. Settlements in this process wake it at once;
 * polling is how it hears of those made by other replicas.
 */
const POLL_MS = 50

type Wake = () => void

// Per store, so that issuers sharing a process but not a store do not wake each other.
const waiters = new WeakMap<ThrottleStore, Map<string, Set<Wake>>>()

function waitersOf(store: ThrottleStore): Map<string, Set<Wake>> {
  let byKey = waiters.get(store)
  if (byKey === undefined) {
    byKey = new Map()
    waiters.set(store, byKey)
  }
  return byKey
}

/** Resolves when a settlement in this process touches `key`, or after `ms`. */
function settledOrElapsed(store: ThrottleStore, key: string, ms: number): Promise<void> {
  const byKey = waitersOf(store)
  return new Promise((resolve) => {
    let set = byKey.get(key)
    if (set === undefined) {
      set = new Set()
      byKey.set(key, set)
    }
    const wake = (): void => {
      clearTimeout(timer)
      const current = byKey.get(key)
      current?.delete(wake)
      if (current?.size === 0) byKey.delete(key)
      resolve()
    }
    const timer = setTimeout(wake, ms)
    set.add(wake)
  })
}

/**
 * Settles a hold and wakes, on each of its keys, the attempt of this process that has waited
 * longest: a settlement frees at most one place on a key (a success may free more, by clearing
 * failures), so waking every waiter would only have all but one ask the store in vain. Others
 * ask again at their next poll.
 */
export async function settleAndWake(
  store: ThrottleStore,
  settlement: Settlement,
  keys: readonly string[],
  now: number,
  windowMs: number,
): Promise<void> {
  try {
    await store.settleAttempts(settlement, { now, windowMs })
  } finally {
    const byKey = waitersOf(store)
    for (const key of keys) {
      const [first] = byKey.get(key) ?? []
      first?.()
    }
  }
}

/** What a reservation that waited ended as: never `busy`, except past the deadline. */
export type Awaited = Exclude<Reservation, { status: 'busy' }> | { status: 'timeout'; key: string }

/**
 * Reserves an attempt, waiting while the keys are busy (their failures and attempts in flight
 * reach a limit) for those attempts to settle, for at most `waitMs`: the attempts ahead of it
 * either fail, and may block the key, or succeed and make room.
 */
export async function reserveWaiting(
  store: ThrottleStore,
  keys: readonly ThrottleLimit[],
  options: { clock: () => number; leaseMs: number; waitMs: number },
): Promise<Awaited> {
  const deadline = performance.now() + options.waitMs
  for (;;) {
    const terms: ReservationTerms = { now: options.clock(), leaseMs: options.leaseMs }
    const reservation = await store.reserveAttempts(keys, terms)
    if (reservation.status !== 'busy') return reservation
    const left = deadline - performance.now()
    if (left <= 0) return { status: 'timeout', key: reservation.key }
    // Spread over the poll interval, so that waiters of different replicas do not ask in step.
    const poll = POLL_MS / 2 + Math.random() * POLL_MS
    await settledOrElapsed(store, reservation.key, Math.min(left, poll))
  }
}
