/**
 * `tessera start --workers N`: one primary process and N worker processes on one port
 * (node:cluster). The primary validates everything and opens the store before any fork, then owns
 * the admin listener; the workers serve the tenants. See docs/deploy.md.
 *
 * @module
 */
import cluster from 'node:cluster'
import type { Worker } from 'node:cluster'
import type { Logger } from 'pino'
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client'
import type { MetricObjectWithValues, MetricValue } from 'prom-client'
import * as z from 'zod'
import { exitProcess } from './process-guard.js'

/** The first wait before a crashed worker is forked again, doubled per crash in a row. */
export const RESTART_INITIAL_MS = 100
/** The longest wait before a crashed worker is forked again. */
export const RESTART_MAX_MS = 30_000
/** A worker that stayed up this long was healthy: its next crash starts the backoff again. */
export const HEALTHY_UPTIME_MS = 60_000
/** How long the primary waits for a worker's metrics or readiness before leaving it out. */
export const WORKER_ANSWER_MS = 2_000
/** The environment variable that tells a worker its slot (1 to N), for its logs. */
export const WORKER_SLOT_VARIABLE = 'TESSERA_WORKER'

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

// Messages between the primary and its workers. Each carries `tessera` so that prom-client's
// or any other library's messages on the same channel are told apart.
const WorkerMessageSchema = z.discriminatedUnion('tessera', [
  z.object({ tessera: z.literal('listening'), port: z.number().int() }),
  z.object({ tessera: z.literal('failed'), text: z.string() }),
  z.object({
    tessera: z.literal('metrics'),
    id: z.number().int(),
    metrics: z.array(z.unknown()),
  }),
  z.object({
    tessera: z.literal('ready'),
    id: z.number().int(),
    problem: z.string().optional(),
  }),
])
type WorkerMessage = z.infer<typeof WorkerMessageSchema>

const PrimaryMessageSchema = z.object({
  tessera: z.enum(['metrics', 'ready']),
  id: z.number().int(),
})

/** Tells the primary that this worker could not start, then exits 1 (at once without a primary). */
export function reportWorkerFailure(text: string): void {
  if (process.send === undefined) exitProcess(1)
  process.send({ tessera: 'failed', text }, undefined, {}, () => exitProcess(1))
}

/** A worker's side: announces its port and answers the primary's metrics and readiness asks. */
export function answerPrimary(options: {
  registry: Registry
  ready: () => boolean
  ping: () => Promise<void>
}): { listening(port: number): void } {
  process.on('message', (raw: unknown) => {
    const parsed = PrimaryMessageSchema.safeParse(raw)
    if (!parsed.success) return
    const { tessera, id } = parsed.data
    if (tessera === 'metrics') {
      void options.registry.getMetricsAsJSON().then((metrics) => {
        process.send?.({ tessera, id, metrics })
      })
      return
    }
    const answer = async (): Promise<string | undefined> => {
      if (!options.ready()) return 'configuration not loaded'
      try {
        await options.ping()
        return undefined
      } catch {
        return 'store unavailable'
      }
    }
    void answer().then((problem) => {
      process.send?.(problem === undefined ? { tessera, id } : { tessera, id, problem })
    })
  })
  return { listening: (port) => process.send?.({ tessera: 'listening', port }) }
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
  const slots: Slot[] = Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    startedAt: 0,
    listening: false,
    crashes: 0,
  }))
  const own = new Registry()
  new Gauge({
    name: 'tessera_workers_listening',
    help: 'Worker processes serving the tenants port',
    registers: [own],
    collect() {
      this.set(slots.filter((slot) => slot.listening).length)
    },
  })
  const restarts = new Counter({
    name: 'tessera_worker_restarts_total',
    help: 'Workers forked again after exiting unasked',
    registers: [own],
  })

  let stopping = false
  let started = false
  let port = 0
  let resolveListening: (port: number) => void = () => undefined
  let rejectListening: (error: Error) => void = () => undefined
  const listening = new Promise<number>((resolve, reject) => {
    resolveListening = resolve
    rejectListening = reject
  })
  const exits = new Set<Promise<void>>()

  let nextId = 0
  const pending = new Map<number, (message: WorkerMessage | undefined) => void>()
  /** Asks every listening worker; a worker that does not answer in time answers undefined. */
  const ask = async (
    kind: 'metrics' | 'ready',
  ): Promise<{ slot: Slot; worker: Worker | undefined; answer: WorkerMessage | undefined }[]> =>
    Promise.all(
      slots
        .filter((slot) => slot.listening && slot.worker?.isConnected() === true)
        .map(
          (slot) =>
            new Promise<{
              slot: Slot
              worker: Worker | undefined
              answer: WorkerMessage | undefined
            }>((settle) => {
              const { worker } = slot
              const resolve = (answer: WorkerMessage | undefined) =>
                settle({ slot, worker, answer })
              const id = nextId++
              const timer = setTimeout(() => pending.get(id)?.(undefined), WORKER_ANSWER_MS)
              pending.set(id, (message) => {
                clearTimeout(timer)
                pending.delete(id)
                resolve(message)
              })
              slot.worker?.send({ tessera: kind, id }, (error: Error | null) => {
                // It died between the check and the send: no answer will come.
                if (error !== null) pending.get(id)?.(undefined)
              })
            }),
        ),
    )

  const fork = (slot: Slot): void => {
    slot.restart = undefined
    slot.listening = false
    slot.failure = undefined
    slot.startedAt = Date.now()
    const worker = cluster.fork({ [WORKER_SLOT_VARIABLE]: String(slot.number) })
    slot.worker = worker
    const pid = worker.process.pid
    logger.info({ worker: slot.number, workerPid: pid }, 'worker forked')
    worker.on('message', (raw: unknown) => {
      const parsed = WorkerMessageSchema.safeParse(raw)
      if (!parsed.success) return
      const message = parsed.data
      if (message.tessera === 'listening') {
        slot.listening = true
        port = message.port
        logger.info({ worker: slot.number, workerPid: pid }, 'worker listening')
        if (!started && slots.every((s) => s.listening)) {
          started = true
          resolveListening(port)
        }
      } else if (message.tessera === 'failed') {
        slot.failure = message.text
      } else {
        pending.get(message.id)?.(message)
      }
    })
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    exits.add(exited)
    void exited.then(() => exits.delete(exited))
    worker.once('exit', (code, signal) => {
      slot.listening = false
      if (slot.worker === worker) slot.worker = undefined
      if (slot.metrics !== undefined) {
        retired = retire(retired, slot.metrics)
        slot.metrics = undefined
      }
      if (stopping) {
        logger.info(
          { worker: slot.number, workerPid: pid, exitCode: code, signal },
          'worker stopped',
        )
        return
      }
      if (!started) {
        // Before every worker listened: the same problem would stop every other one too.
        stopping = true
        for (const other of slots) other.worker?.process.kill('SIGTERM')
        rejectListening(
          new WorkerStartError(
            slot.failure ?? `tessera: worker ${slot.number} exited (${signal ?? code}) at start\n`,
          ),
        )
        return
      }
      slot.crashes = crashesInARow(slot.crashes, Date.now() - slot.startedAt)
      const delay = restartDelayMs(slot.crashes)
      logger.error(
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
        logger.error({ worker: slot.number, problem: slot.failure.trim() }, 'worker failed')
      }
      restarts.inc()
      slot.restart = setTimeout(() => fork(slot), delay)
    })
  }
  // What the workers gone counted (their counters and histograms, summed), as they last answered
  // it: kept in /metrics so that a restarted worker, which counts from zero again, does not make
  // the totals fall. What a worker counted after its last answer is lost with it.
  let retired: Promise<unknown[]> = Promise.resolve([])
  for (const slot of slots) fork(slot)

  return {
    listening,
    registry: {
      contentType: own.contentType,
      async metrics() {
        const perWorker: unknown[][] = []
        for (const { slot, worker, answer } of await ask('metrics')) {
          // Unless that worker exited meanwhile: its slot's figures were retired with it.
          if (answer?.tessera === 'metrics' && slot.worker === worker) slot.metrics = answer.metrics
          // One that did not answer in time counts what it last answered, not nothing.
          if (slot.metrics !== undefined) perWorker.push(slot.metrics)
        }
        const workers = AggregatorRegistry.aggregate([...perWorker, await retired])
        return (await workers.metrics()) + (await own.metrics())
      },
    },
    async check() {
      const answers = (await ask('ready')).map(({ answer }) => answer)
      if (answers.length === 0) return 'no worker listening'
      const missing = answers.filter((answer) => answer === undefined).length
      if (missing > 0) return `${missing} worker(s) did not answer`
      const problem = answers.find((answer) => answer?.tessera === 'ready' && answer.problem)
      return problem?.tessera === 'ready' ? `a worker: ${problem.problem}` : undefined
    },
    reload() {
      for (const slot of slots) slot.worker?.process.kill('SIGHUP')
    },
    async stop(graceMs) {
      stopping = true
      for (const slot of slots) {
        if (slot.restart !== undefined) clearTimeout(slot.restart)
        slot.worker?.process.kill('SIGTERM')
      }
      const late = setTimeout(() => {
        logger.warn('workers still running after the grace period: killing them')
        for (const slot of slots) slot.worker?.process.kill('SIGKILL')
      }, graceMs)
      while (exits.size > 0) await Promise.all([...exits])
      clearTimeout(late)
    },
  }
}

/**
 * `retired` with the counters and histograms of `metrics` (a worker's last answer) added: the
 * kinds whose totals only grow. Its gauges described the worker that is gone.
 */
async function retire(retired: Promise<unknown[]>, metrics: unknown[]): Promise<unknown[]> {
  const before = await retired
  try {
    const growing = (metrics as MetricObjectWithValues<MetricValue<string>>[]).filter(
      (metric) => String(metric.type) === 'counter' || String(metric.type) === 'histogram',
    )
    return await AggregatorRegistry.aggregate([before, growing]).getMetricsAsJSON()
  } catch {
    // A worker's answer prom-client cannot read: what was kept stays, and /metrics still works.
    return before
  }
}
