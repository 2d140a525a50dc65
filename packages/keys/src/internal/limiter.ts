/**
 * A limit on how many key generations run at once in this process, with a queue for the rest.
 *
 * RSA generation runs in libuv's thread pool (four threads by default), which the file system,
 * DNS lookups and password hashing (scrypt) share: a burst of first uses or a restart rotating
 * thousands of keys must not take every thread, or logins and file reads would queue behind
 * minutes of key generation. Urgent tasks (a request waits on them: a tenant's first key) run
 * before background ones (rotations, which have a key that goes on signing meanwhile).
 */
export interface Limiter {
  /**
   * Runs `task` once a slot is free. A `signal` aborted while the task waits takes it out of
   * the queue and rejects with the signal's reason; a task already running is not interrupted.
   */
  run<T>(task: () => Promise<T>, options: { urgent: boolean; signal?: AbortSignal }): Promise<T>
  /** Tasks running now. */
  readonly running: number
  /** Tasks waiting for a slot. */
  readonly queued: number
}

interface Waiting {
  start: () => void
  cancel: (reason: unknown) => void
}

/** A limiter of `concurrency` slots (a positive integer). */
export function createLimiter(concurrency: number): Limiter {
  if (!(Number.isInteger(concurrency) && concurrency > 0)) {
    throw new TypeError('createLimiter: concurrency must be a positive integer')
  }
  const urgent: Waiting[] = []
  const background: Waiting[] = []
  let running = 0

  const next = (): void => {
    while (running < concurrency) {
      const waiting = urgent.shift() ?? background.shift()
      if (waiting === undefined) return
      waiting.start()
    }
  }

  return {
    get running() {
      return running
    },
    get queued() {
      return urgent.length + background.length
    },
    run<T>(task: () => Promise<T>, options: { urgent: boolean; signal?: AbortSignal }) {
      const { signal } = options
      if (signal?.aborted === true) {
        const reason: unknown = signal.reason
        return Promise.reject(
          reason instanceof Error ? reason : new Error('aborted', { cause: reason }),
        )
      }
      return new Promise<T>((resolve, reject) => {
        const queue = options.urgent ? urgent : background
        const onAbort = (): void => waiting.cancel(signal?.reason)
        const waiting: Waiting = {
          start: () => {
            signal?.removeEventListener('abort', onAbort)
            running++
            // A task that throws before its first await rejects like one that fails later.
            new Promise<T>((settle) => settle(task())).then(resolve, reject).finally(() => {
              running--
              next()
            })
          },
          cancel: (reason) => {
            const index = queue.indexOf(waiting)
            if (index === -1) return
            queue.splice(index, 1)
            reject(reason instanceof Error ? reason : new Error('aborted', { cause: reason }))
          },
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        queue.push(waiting)
        next()
      })
    },
  }
}

/**
 * The process-wide limiter of key generations: two at once leaves half the default thread pool
 * to everything else, and on a 2-core machine already keeps both cores busy.
 */
export const keyGenerations: Limiter = createLimiter(2)
