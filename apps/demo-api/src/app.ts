import { Router } from '@koa/router'
import Koa from 'koa'
import { createVerifier } from '@tessera/verifier'
import type { FetchLike, Verifier, VerifierEvent } from '@tessera/verifier'
import { bearer, requireScope } from '@tessera/verifier/koa'
import type { KoaAuthState } from '@tessera/verifier/koa'
import type { Settings } from './settings.js'

/** What {@link createApp} needs: the settings, plus hooks for tests and logging. */
export interface AppOptions extends Pick<
  Settings,
  'issuers' | 'audience' | 'secret' | 'algorithms'
> {
  /** The fetch for JWKS requests; default `globalThis.fetch`. */
  fetch?: FetchLike
  /** The verifier's events (JWKS fetches and failures, unknown kids, refusals). */
  onEvent?: (event: VerifierEvent) => void
  /** The verifier's clock in epoch milliseconds, for tests; default `Date.now`. */
  now?: () => number
}

/** The demo API and the verifier behind it. */
export interface DemoApi {
  app: Koa<KoaAuthState>
  verifier: Verifier
}

/** Fake orders, the same for every caller: this is a demo of access control, not of orders. */
const ORDERS = [
  { id: 'ord-1', item: 'tessera tiles', quantity: 120 },
  { id: 'ord-2', item: 'grout', quantity: 3 },
]

/**
 * Builds the demo API: `GET /healthz` is public; `GET /orders` needs `orders:read`,
 * `POST /orders` needs `orders:write`, `GET /me` any valid token. Does no I/O until a request
 * arrives.
 *
 * @example
 * ```ts
 * const { app } = createApp({ issuers: ['http://acme.localhost'], audience: undefined,
 *   secret: process.env.JWT_SECRET, algorithms: undefined })
 * app.listen(4000)
 * ```
 */
export function createApp(options: AppOptions): DemoApi {
  const verifier = createVerifier({
    issuer: options.issuers,
    audience: options.audience,
    secret: options.secret,
    algorithms: options.algorithms,
    fetch: options.fetch,
    onEvent: options.onEvent,
    now: options.now,
  })
  const app = new Koa<KoaAuthState>()
  const router = new Router<KoaAuthState>()
  const auth = bearer(verifier, { realm: 'demo-api' })

  router.get('/healthz', (ctx) => {
    // The per-algorithm counts tell when HS256 traffic has stopped (see the verifier README).
    const { accepted, jwksFetches, jwksFetchFailures, staleKeysServed } = verifier.stats()
    ctx.body = { status: 'ok', accepted, jwksFetches, jwksFetchFailures, staleKeysServed }
  })
  router.get('/me', auth, (ctx) => {
    const { payload, protectedHeader, scopes } = ctx.state.auth
    ctx.body = {
      sub: payload.sub,
      iss: payload.iss,
      client_id: payload.client_id,
      alg: protectedHeader.alg,
      scopes,
    }
  })
  router.get('/orders', auth, requireScope('orders:read'), (ctx) => {
    ctx.body = { orders: ORDERS }
  })
  router.post('/orders', auth, requireScope('orders:write'), (ctx) => {
    ctx.status = 201
    ctx.body = { id: 'ord-3', created_by: ctx.state.auth.payload.sub }
  })

  app.use(router.routes())
  app.use(router.allowedMethods())
  return { app, verifier }
}
