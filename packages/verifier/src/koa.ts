/**
 * Koa middleware for Tessera access tokens: {@link bearer} verifies the `Authorization: Bearer`
 * token and sets `ctx.state.auth`; {@link requireScope} guards a route by scope. Failures are
 * answered per RFC 6750 by the same renderer as the Express and fetch adapters.
 *
 * @example
 * ```ts
 * import Koa from 'koa'
 * import { bearer, requireScope } from '@tessera/verifier/koa'
 *
 * const app = new Koa()
 * app.use(bearer({ issuer: 'https://acme.example.com', secret: process.env.JWT_SECRET }))
 * app.use(requireScope('orders:read'))
 * app.use((ctx) => {
 *   ctx.body = { sub: ctx.state.auth.payload.sub }
 * })
 * ```
 *
 * @module
 */
import type { Context, Middleware } from 'koa'
import type { AuthContext } from './auth.js'
import type { VerifierOptions } from './options.js'
import { renderError } from './render.js'
import type { ErrorResponse } from './render.js'
import type { Verifier } from './verifier.js'
import { answerMetadata, metadataOf } from './internal/resource-metadata.js'
import { checkRealm, checkRequiredScopes, checkScopes, toVerifier } from './internal/bearer.js'
import { challengeOf, challengeOptions, createAuthenticator } from './internal/authenticate.js'
import { proofRequestOf } from './internal/dpop.js'

/** The Koa state the middleware sets. */
export interface KoaAuthState {
  /** The verified token, its claims and scopes. */
  auth: AuthContext
}

/** Options of the {@link bearer} middleware. */
export interface BearerOptions {
  /** The realm of the `WWW-Authenticate` challenge. Default `api`. */
  realm?: string
}

function send(ctx: Context, response: ErrorResponse): void {
  ctx.status = response.status
  ctx.set(response.headers)
  ctx.body = response.body
}

/**
 * Verifies the request's bearer token and sets `ctx.state.auth`, or answers 400, 401 or 503
 * without calling the next middleware. Pass a {@link Verifier} to share its key caches across
 * middleware, or options to create one.
 *
 * @example
 * ```ts
 * router.get('/orders', bearer(verifier), requireScope('orders:read'), listOrders)
 * ```
 * @see RFC 6750 §3
 */
export function bearer(
  verifier: Verifier | VerifierOptions,
  options: BearerOptions = {},
): Middleware<KoaAuthState> {
  const instance = toVerifier(verifier)
  const render = challengeOptions(instance, checkRealm(options.realm, 'bearer'))
  const authenticate = createAuthenticator(instance, render)
  // Not an async function: a token-cache hit (a plain value) goes straight on to `next`, without
  // a promise of its own; only a verification that waits (a Promise) is awaited.
  return (ctx, next) => {
    let pending: AuthContext | Promise<AuthContext>
    try {
      // Node keeps header names in lower case: the header itself, without Koa's getter.
      pending = authenticate(ctx.req.headers.authorization, () =>
        // ctx.protocol and ctx.host follow X-Forwarded-* when app.proxy is set; originalUrl is
        // the target as received, whatever a mount point did to ctx.path.
        proofRequestOf(
          ctx.method,
          `${ctx.protocol}://${ctx.host}`,
          ctx.originalUrl,
          ctx.req.headers.dpop,
        ),
      )
    } catch (error) {
      send(ctx, renderError(error, render))
      return Promise.resolve()
    }
    if (!(pending instanceof Promise)) {
      ctx.state.auth = pending
      return next()
    }
    // The second callback answers a failed verification only; an error from `next` propagates.
    return pending.then(
      (auth) => {
        ctx.state.auth = auth
        return next()
      },
      (error: unknown) => {
        send(ctx, renderError(error, render))
      },
    )
  }
}

/**
 * Requires every listed scope (a space-separated string or an array) in `ctx.state.auth`;
 * otherwise answers 403 `insufficient_scope` naming them. Without a verified token (no
 * {@link bearer} before it), answers 401.
 *
 * @example
 * ```ts
 * router.delete('/orders/:id', bearer(verifier), requireScope(['orders:write']), remove)
 * ```
 * @see RFC 6750 §3.1 (insufficient_scope)
 */
export function requireScope(scope: string | readonly string[]): Middleware<KoaAuthState> {
  const required = checkRequiredScopes(scope, 'requireScope')
  return async (ctx, next) => {
    const auth = (ctx.state as Partial<KoaAuthState>).auth
    try {
      checkScopes(auth, required)
    } catch (error) {
      send(ctx, renderError(error, challengeOf(auth)))
      return
    }
    await next()
  }
}

/**
 * Serves the verifier's OAuth 2.0 Protected Resource Metadata (RFC 9728): answers GET and HEAD
 * for `/.well-known/oauth-protected-resource` and, when the resource has a path, for
 * `/.well-known/oauth-protected-resource{path}`, with the same JSON document
 * (`Cache-Control: public, max-age=3600`). Every other request, other methods on those paths
 * included, is passed on. Throws a `TypeError` when the verifier has no `resourceMetadata`.
 *
 * @example
 * ```ts
 * app.use(protectedResourceMetadata(verifier))
 * app.use(bearer(verifier))
 * ```
 * @see RFC 9728 §3
 */
export function protectedResourceMetadata(verifier: Verifier): Middleware {
  const metadata = metadataOf(verifier)
  if (metadata === undefined) {
    throw new TypeError(
      'protectedResourceMetadata: the verifier was created without resourceMetadata',
    )
  }
  return (ctx, next) => {
    const answer = answerMetadata(metadata, ctx.method, ctx.path)
    if (answer === undefined) return next()
    ctx.status = answer.status
    ctx.set(answer.headers)
    ctx.body = answer.body
    return Promise.resolve()
  }
}

export type { AuthContext } from './auth.js'
