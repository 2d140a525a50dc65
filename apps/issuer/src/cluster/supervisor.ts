/**
 * `tessera start --workers N`: one primary process and N worker processes on one port
 * (node:cluster). The primary validates everything and opens the store before any fork, then owns
 * the admin listener; the workers serve the tenants. This module is the primary's supervision of
 * its workers: forking, restarting a crashed one with backoff, stopping, and asking them for
 * /metrics and /readyz. See docs/deploy.md.
 *
 * @module
 */
import cluster from 'node:cluster'
import type { Worker } from 'node:cluster'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { createWorkerAsks, parseWorkerMessage, WORKER_SLOT_VARIABLE } from './ipc.js'
import type { WorkerAsk, WorkerMessage } from './ipc.js'
import { createWorkerMetrics } from './metrics.js'
import type { WorkerMetrics } from './metrics.js'

/** The first wait before a crashed worker is forked again, doubled per crash in a row. */
export const RESTART_INITIAL_MS = 100
/** The longest wait before a crashed worker is forked again. */
export const RESTART_MAX_MS = 30_000
/** A worker that stayed up this long was healthy: its next crash starts the backoff again. */
export const HEALTHY_UPTIME_MS = 60_000

/**
 * The crashes in a row of a slot after one more: a worker that stayed up
 * {@link HEALTHY_UPTIME_MS} had recovered, so its crash counts as the first.
 */
export function crashesInARow(previous: number, uptimeMs: number): number {
  return uptimeMs >= HEALTHY_UPTIME_MS ? 1 : previous + 1
}

/** The wait before forking again after `crashes` crashes in a row (1 or more). */
export function restartDelayMs(crashes: number): number {
  return Math.min(RESTART_MAX_MS, RESTART_INITIAL_MS * 2 ** Math.max(0, crashes - 1))
}

/** One of the N places a worker runs in: the worker of the moment and its crash history. */
interface Slot {
  number: number
  worker?: Worker
  startedAt: number
  listening: boolean
  crashes: number
  restart?: NodeJS.Timeout
  /** The message of a worker that could not start. */
  failure?: string
  /** The metrics its worker last answered (prom-client's JSON form). */
  metrics?: unknown[]
}

/** A listening slot's answer to an ask, with the worker that was asked. */
interface SlotAnswer {
  slot: Slot
  worker: Worker | undefined
  answer: WorkerMessage | undefined
}

export interface Workers {
  /** Resolves with the tenants' port once every worker listens; rejects with what stopped one. */
  listening: Promise<number>
  /** What /metrics renders: every listening worker's metrics aggregated, and the primary's. */
  registry: Pick<Registry, 'contentType' | 'metrics'>
  /** For /readyz: a problem when no worker listens or one that listens is not ready. */
  check(): Promise<string | undefined>
  /** SIGHUP to every worker. */
  reload(): void
  /** SIGTERM to every worker; resolves once all have exited (SIGKILL after `graceMs`). */
  stop(graceMs: number): Promise<void>
}

/** A worker failed to start before all had listened: its message, printed once by the CLI. */
export class WorkerStartError extends Error {
  constructor(readonly text: string) {
    super(text.trim())
    this.name = 'WorkerStartError'
  }
}

/**
 * Forks `count` workers (this same command line, in cluster mode), restarts a worker that exits
 * unasked after {@link restartDelayMs}, and asks workers for their metrics and readiness.
 * `roundRobin`: the primary deals the connections (node:cluster's SCHED_RR) instead of the
 * workers accepting them.
 */
export function forkWorkers(
  count: number,
  logger: Logger,
  { roundRobin = false }: { roundRobin?: boolean } = {},
): Workers {
  // By default every worker accepts from the one listening socket and the kernel picks which:
  // a worker that dies takes only the connections it had accepted. Round robin has the primary
  // accept and hand each connection over, and one being handed to a worker as it dies is
  // never answered nor closed.
  cluster.schedulingPolicy = roundRobin ? cluster.SCHED_RR : cluster.SCHED_NONE
  const pool = new WorkerPool(count, logger)
  return {
    listening: pool.listening,
    registry: pool.metrics.registry,
    check: () => pool.check(),
    reload: () => pool.reload(),
    stop: (graceMs) => pool.stop(graceMs),
  }
}

/** The primary's workers: their slots, what they said, their exits and restarts. */
class WorkerPool {
  readonly listening: Promise<number>
  readonly metrics: WorkerMetrics
  readonly #slots: Slot[]
  readonly #logger: Logger
  readonly #asks = createWorkerAsks()
  readonly #exits = new Set<Promise<void>>()
  #stopping = false
  #started = false
  #resolveListening: (port: number) => void = () => undefined
  #rejectListening: (error: Error) => void = () => undefined

  constructor(count: number, logger: Logger) {
    this.#logger = logger
    this.#slots = Array.from({ length: count }, (_, i) => ({
      number: i + 1,
      startedAt: 0,
      listening: false,
      crashes: 0,
    }))
    this.listening = new Promise<number>((resolve, reject) => {
      this.#resolveListening = resolve
      this.#rejectListening = reject
    })
    this.metrics = createWorkerMetrics({
      listening: () => this.#slots.filter((slot) => slot.listening).length,
      collect: () => this.#collectMetrics(),
    })
    for (const slot of this.#slots) this.#fork(slot)
  }

  /** For /readyz: a problem when no worker listens or one that listens is not ready. */
  async check(): Promise<string | undefined> {
    const answers = (await this.#ask('ready')).map(({ answer }) => answer)
    if (answers.length === 0) return 'no worker listening'
    const missing = answers.filter((answer) => answer === undefined).length
    if (missing > 0) return `${missing} worker(s) did not answer`
    const problem = answers.find((answer) => answer?.tessera === 'ready' && answer.problem)
    return problem?.tessera === 'ready' ? `a worker: ${problem.problem}` : undefined
  }

  reload(): void {
    for (const slot of this.#slots) slot.worker?.process.kill('SIGHUP')
  }

  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    for (const slot of this.#slots) {
      if (slot.restart !== undefined) clearTimeout(slot.restart)
      slot.worker?.process.kill('SIGTERM')
    }
    const late = setTimeout(() => {
      this.#logger.warn('workers still running after the grace period: killing them')
      for (const slot of this.#slots) slot.worker?.process.kill('SIGKILL')
    }, graceMs)
    while (this.#exits.size > 0) await Promise.all([...this.#exits])
    clearTimeout(late)
  }

  /** Asks every listening worker; a worker that does not answer in time answers undefined. */
  #ask(kind: WorkerAsk): Promise<SlotAnswer[]> {
    return Promise.all(
      this.#slots
        .filter((slot) => slot.listening && slot.worker?.isConnected() === true)
        .map(async (slot) => {
          const { worker } = slot
          const answer = worker === undefined ? undefined : await this.#asks.ask(worker, kind)
          return { slot, worker, answer }
        }),
    )
  }

  /** Each listening worker's metrics, or what it last answered when it does not answer now. */
  async #collectMetrics(): Promise<unknown[][]> {
    const perWorker: unknown[][] = []
    for (const { slot, worker, answer } of await this.#ask('metrics')) {
      // Unless that worker exited meanwhile: its slot's figures were retired with it.
      if (answer?.tessera === 'metrics' && slot.worker === worker) slot.metrics = answer.metrics
      // One that did not answer in time counts what it last answered, not nothing.
      if (slot.metrics !== undefined) perWorker.push(slot.metrics)
    }
    return perWorker
  }

  #fork(slot: Slot): void {
    slot.restart = undefined
    slot.listening = false
    slot.failure = undefined
    slot.startedAt = Date.now()
    const worker = cluster.fork({ [WORKER_SLOT_VARIABLE]: String(slot.number) })
    slot.worker = worker
    const pid = worker.process.pid
    this.#logger.info({ worker: slot.number, workerPid: pid }, 'worker forked')
    worker.on('message', (raw: unknown) => {
      const message = parseWorkerMessage(raw)
      if (message !== undefined) this.#heard(slot, pid, message)
    })
    const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    this.#exits.add(exit)
    void exit.then(() => this.#exits.delete(exit))
    worker.once('exit', (code, signal) => this.#exited(slot, worker, code, signal))
  }

  /** What a worker says: its port, its failure to start, or an answer to an ask. */
  #heard(slot: Slot, pid: number | undefined, message: WorkerMessage): void {
    if (message.tessera === 'listening') {
      slot.listening = true
      this.#logger.info({ worker: slot.number, workerPid: pid }, 'worker listening')
      if (!this.#started && this.#slots.every((s) => s.listening)) {
        this.#started = true
        this.#resolveListening(message.port)
      }
    } else if (message.tessera === 'failed') {
      slot.failure = message.text
    } else {
      this.#asks.answered(message)
    }
  }

  /** A worker exited: stopped, failed at start (which stops all), or crashed (forked again). */
  #exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    const pid = worker.process.pid
    slot.listening = false
    if (slot.worker === worker) slot.worker = undefined
    if (slot.metrics !== undefined) {
      this.metrics.retire(slot.metrics)
      slot.metrics = undefined
    }
    if (this.#stopping) {
      this.#logger.info(
        { worker: slot.number, workerPid: pid, exitCode: code, signal },
        'worker stopped',
      )
      return
    }
    if (!this.#started) {
      // Before every worker listened: the same problem would stop every other one too.
      this.#stopping = true
      for (const other of this.#slots) other.worker?.process.kill('SIGTERM')
      this.#rejectListening(
        new WorkerStartError(
          slot.failure ?? `tessera: worker ${slot.number} exited (${signal ?? code}) at start\n`,
        ),
      )
      return
    }
    slot.crashes = crashesInARow(slot.crashes, Date.now() - slot.startedAt)
    const delay = restartDelayMs(slot.crashes)
    this.#logger.error(
      {
        worker: slot.number,
        workerPid: pid,
        exitCode: code,
        signal,
        crashes: slot.crashes,
        restartInMs: delay,
      },
      'worker exited unasked: restarting it',
    )
    if (slot.failure !== undefined) {
      this.#logger.error({ worker: slot.number, problem: slot.failure.trim() }, 'worker failed')
    }
    this.metrics.restarted()
    slot.restart = setTimeout(() => this.#fork(slot), delay)
  }
}
