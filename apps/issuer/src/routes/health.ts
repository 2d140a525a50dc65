import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'

/** GET /healthz: the process is alive and answering. */
export function healthzRoute(): Middleware {
  return (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { status: 'ok' }
  }
}

/**
 * GET /readyz: configuration is loaded and the store answers (and, in the primary of
 * `--workers`, `workers` finds no problem); load balancers route on it.
 */
export function readyzRoute(deps: {
  ready: () => boolean
  ping: () => Promise<void>
  workers?: () => Promise<string | undefined>
  logger: Logger
}): Middleware {
  return async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    let problem: string | undefined
    if (!deps.ready()) {
      problem = 'configuration not loaded'
    } else {
      try {
        await deps.ping()
      } catch (error) {
        deps.logger.warn({ err: error }, 'readiness check: store did not answer')
        problem = 'store unavailable'
      }
      problem ??= await deps.workers?.()
    }
    ctx.status = problem === undefined ? 200 : 503
    ctx.body =
      problem === undefined ? { status: 'ready' } : { status: 'not ready', reason: problem }
  }
}

/** GET /metrics: Prometheus text format. */
export function metricsRoute(registry: Pick<Registry, 'contentType' | 'metrics'>): Middleware {
  return async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.type = registry.contentType
    ctx.body = await registry.metrics()
  }
}
