import type Database from 'better-sqlite3'
import type { SqliteContext } from './context.js'

/**
 * Group commit. A rotation, a throttle reservation or a settlement is queued and run at the
 * end of the current turn of the event loop, together with every other one queued in that
 * turn, in one IMMEDIATE transaction: each in a savepoint of its own (a nested better-sqlite3
 * transaction), so one that throws is undone alone, and all are committed at once. Under load
 * most of the cost of one alone is the BEGIN and the COMMIT (locks and WAL writes), which the
 * batch shares. They run in the order they were asked, each sees those before it, and each
 * caller hears its answer only once the COMMIT has returned, so an answer is as durable as one
 * committed alone. No transaction stays open between turns, so no other call ever sees
 * uncommitted rows.
 */
export interface GroupCommit {
  /** Queues `write` (a better-sqlite3 transaction) with `args`; a closed store rejects it. */
  queue<A extends unknown[], T>(write: Database.Transaction<(...args: A) => T>, args: A): Promise<T>
  /** Runs the writes queued so far now, rather than at the end of the turn. */
  flush(): void
}

interface QueuedWrite {
  /** The write in a transaction of its own, when it is alone in its turn. */
  alone: () => unknown
  /** The write in a savepoint of the batch's transaction. */
  nested: () => unknown
  resolve: (result: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { result: unknown } | { error: unknown }

/** The group commit of one SQLite connection. */
export function createGroupCommit({ db, use, wrote }: SqliteContext): GroupCommit {
  let queued: QueuedWrite[] = []
  const runBatch = db.transaction((batch: readonly QueuedWrite[]): Outcome[] =>
    batch.map((item) => {
      try {
        return { result: item.nested() }
      } catch (error) {
        // Some errors (I/O, a full disk) make SQLite end the whole transaction: then nothing of
        // the batch is stored, and every write in it must fail, not just this one.
        if (!db.inTransaction) throw error
        return { error }
      }
    }),
  )
  function runQueuedWrites(): void {
    const batch = queued
    queued = []
    if (batch.length === 0) return
    let outcomes: Outcome[]
    try {
      use()
      // One write needs no savepoint.
      const [only] = batch
      outcomes =
        only !== undefined && batch.length === 1
          ? [{ result: only.alone() }]
          : runBatch.immediate(batch)
    } catch (error) {
      // BEGIN or COMMIT failed (or the single write threw): nothing of the batch is stored.
      for (const item of batch) item.reject(error)
      return
    }
    wrote()
    batch.forEach((item, index) => {
      const outcome = outcomes[index]
      if (outcome !== undefined && 'result' in outcome) item.resolve(outcome.result)
      else item.reject(outcome?.error)
    })
  }
  return {
    queue(write, args) {
      return new Promise((resolve, reject) => {
        use()
        if (queued.length === 0) setImmediate(runQueuedWrites)
        queued.push({
          alone: () => write.immediate(...args),
          nested: () => write(...args),
          resolve: resolve as (result: unknown) => void,
          reject,
        })
      })
    },
    flush: runQueuedWrites,
  }
}
