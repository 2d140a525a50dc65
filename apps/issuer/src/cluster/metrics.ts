/**
 * /metrics of the primary of `tessera start --workers N`: every worker's metrics aggregated, the
 * totals of the workers gone kept, and the primary's own figures on the workers.
 *
 * @module
 */
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client'
import type { MetricObjectWithValues, MetricValue } from 'prom-client'

/** The workers' metrics as the primary renders them. */
export interface WorkerMetrics {
  /** What /metrics renders. */
  registry: Pick<Registry, 'contentType' | 'metrics'>
  /** Counts a worker forked again after exiting unasked. */
  restarted(): void
  /** Keeps the counters and histograms of a worker that exited, as it last answered them. */
  retire(metrics: unknown[]): void
}

/**
 * Metrics over `collect`, which answers each listening worker's metrics (prom-client's JSON
 * form), and `listening`, the count of workers serving the tenants' port.
 */
export function createWorkerMetrics(options: {
  listening: () => number
  collect: () => Promise<unknown[][]>
}): WorkerMetrics {
  const own = new Registry()
  new Gauge({
    name: 'tessera_workers_listening',
    help: 'Worker processes serving the tenants port',
    registers: [own],
    collect() {
      this.set(options.listening())
    },
  })
  const restarts = new Counter({
    name: 'tessera_worker_restarts_total',
    help: 'Workers forked again after exiting unasked',
    registers: [own],
  })
  // What the workers gone counted (their counters and histograms, summed), as they last answered
  // it: kept in /metrics so that a restarted worker, which counts from zero again, does not make
  // the totals fall. What a worker counted after its last answer is lost with it.
  let retired: Promise<unknown[]> = Promise.resolve([])
  return {
    registry: {
      contentType: own.contentType,
      async metrics() {
        const perWorker = await options.collect()
        const workers = AggregatorRegistry.aggregate([...perWorker, await retired])
        return (await workers.metrics()) + (await own.metrics())
      },
    },
    restarted: () => restarts.inc(),
    retire(metrics) {
      retired = retire(retired, metrics)
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
