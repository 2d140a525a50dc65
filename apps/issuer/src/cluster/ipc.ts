/**
 * The messages between the primary of `tessera start --workers N` and its workers (node:cluster's
 * IPC channel): a worker announces its port or its failure to start, and answers the primary's
 * asks for its metrics and its readiness.
 *
 * @module
 */
import type { Worker } from 'node:cluster'
import type { Registry } from 'prom-client'
import * as z from 'zod'
import { exitProcess } from '../providers/process-guard.js'

/** How long the primary waits for a worker's metrics or readiness before leaving it out. */
export const WORKER_ANSWER_MS = 2_000
/** The environment variable that tells a worker its slot (1 to N), for its logs. */
export const WORKER_SLOT_VARIABLE = 'TESSERA_WORKER'

// Each message carries `tessera` so that prom-client's or any other library's messages on the
// same channel are told apart.
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
/** A message from a worker to the primary. */
export type WorkerMessage = z.infer<typeof WorkerMessageSchema>
/** What the primary asks of a worker. */
export type WorkerAsk = 'metrics' | 'ready'

const PrimaryMessageSchema = z.object({
  tessera: z.enum(['metrics', 'ready']),
  id: z.number().int(),
})

/** A worker's message, or undefined for anything else on the channel. */
export function parseWorkerMessage(raw: unknown): WorkerMessage | undefined {
  const parsed = WorkerMessageSchema.safeParse(raw)
  return parsed.success ? parsed.data : undefined
}

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

/** The primary's side of the asks: each carries an id, and its answer is matched by it. */
export interface WorkerAsks {
  /** Asks `worker`; answers undefined when it does not answer within {@link WORKER_ANSWER_MS}. */
  ask(worker: Worker, kind: WorkerAsk): Promise<WorkerMessage | undefined>
  /** Hands over a worker's answer (a `metrics` or `ready` message) to the ask it answers. */
  answered(message: WorkerMessage & { id: number }): void
}

export function createWorkerAsks(): WorkerAsks {
  let nextId = 0
  const pending = new Map<number, (message: WorkerMessage | undefined) => void>()
  return {
    ask: (worker, kind) =>
      new Promise((resolve) => {
        const id = nextId++
        const timer = setTimeout(() => pending.get(id)?.(undefined), WORKER_ANSWER_MS)
        pending.set(id, (message) => {
          clearTimeout(timer)
          pending.delete(id)
          resolve(message)
        })
        worker.send({ tessera: kind, id }, (error: Error | null) => {
          // It died between the check and the send: no answer will come.
          if (error !== null) pending.get(id)?.(undefined)
        })
      }),
    answered(message) {
      pending.get(message.id)?.(message)
    },
  }
}
