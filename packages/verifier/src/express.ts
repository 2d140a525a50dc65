/**
 * Express middleware for Tessera access tokens: {@link bearer} verifies the
 * `Authorization: Bearer` token and sets `req.auth`; {@link requireScope} guards a route by
 * scope. Failures are answered per RFC 6750 by the same renderer as the Koa and fetch adapters.
 * Works with Express 4 and 5.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { bearer, requireScope } from '@tessera/verifier/express'
 *
 * const app = express()
 * app.get('/orders', bearer(verifier), requireScope('orders:read'), (req, res) => {
 *   res.json({ sub: req.auth?.payload.sub })
 * })
 * ```
 *
 * @module
 */
import type { RequestHandler, Response } from 'express'
import type { AuthContext } from './auth.js'
import type { VerifierOptions } from './options.js'
import { renderError } from './render.js'
import type { ErrorResponse } from './render.js'
import type { Verifier } from './verifier.js'
import { answerMetadata, metadataOf } from './internal/resource-metadata.js'
import { checkRealm, checkRequiredScopes, checkScopes, toVerifier } from './internal/bearer.js'
import { challengeOf, challengeOptions, createAuthenticator } from './internal/authenticate.js'
import { proofRequestOf } from './internal/dpop.js'

declare global {
  // Express's own extension point: its types declare `Express.Request` for augmentation.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `bearer` from `@tessera/verifier/express` once the token is verified. */
      auth?: AuthContext
    }
  }
}

/** Options of the {@link bearer} middleware. */
export interface BearerOptions {
  /** The realm of the `WWW-Authenticate` challenge. Default `api`. */
  realm?: string
}

function send(res: Response, response: ErrorResponse): void {
  res.statusCode = response.status
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value)
  res.end(response.body)
}

/**
 * Verifies the request's bearer token and sets `req.auth`, or answers 400, 401 or 503 without
 * calling `next`. Pass a {@link Verifier} to share its key caches, or options to create one.
 *
 * @example
 * ```ts
 * app.use('/api', bearer(verifier, { realm: 'orders' }))
 * ```
 * @see RFC 6750 §3
 */
export function bearer(
  verifier: Verifier | VerifierOptions,
  options: BearerOptions = {},
): RequestHandler {
  const instance = toVerifier(verifier)
  const render = challengeOptions(instance, checkRealm(options.realm, 'bearer'))
  const authenticate = createAuthenticator(instance, render)
  return (req, res, next) => {
    let pending: AuthContext | Promise<AuthContext>
    try {
      pending = authenticate(req.headers.authorization, () =>
        // req.protocol follows X-Forwarded-Proto under `trust proxy`; originalUrl is the target
        // as received, also under a mount point.
        proofRequestOf(
          req.method,
          `${req.protocol}://${req.headers.host ?? ''}`,
          req.originalUrl,
          req.headers.dpop,
        ),
      )
    } catch (error) {
      send(res, renderError(error, render))
      return
    }
    if (pending instanceof Promise) {
      pending.then(
        (auth) => {
          req.auth = auth
          next()
        },
        (error: unknown) => send(res, renderError(error, render)),
      )
    } else {
      // A token cache hit: no turn of the event loop to wait for.
      req.auth = pending
      next()
    }
  }
}

/**
 * Requires every listed scope (a space-separated string or an array) in `req.auth`; otherwise
 * answers 403 `insufficient_scope` naming them. Without a verified token, answers 401.
 *
 * @example
 * ```ts
 * app.post('/orders', bearer(verifier), requireScope('orders:write'), createOrder)
 * ```
 * @see RFC 6750 §3.1 (insufficient_scope)
 */
export function requireScope(scope: string | readonly string[]): RequestHandler {
  const required = checkRequiredScopes(scope, 'requireScope')
  return (req, res, next) => {
    try {
      checkScopes(req.auth, required)
    } catch (error) {
      send(res, renderError(error, challengeOf(req.auth)))
      return
    }
    next()
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
 * app.use('/mcp', bearer(verifier))
 * ```
 * @see RFC 9728 §3
 */
export function protectedResourceMetadata(verifier: Verifier): RequestHandler {
  const metadata = metadataOf(verifier)
  if (metadata === undefined) {
    throw new TypeError(
      'protectedResourceMetadata: the verifier was created without resourceMetadata',
    )
  }
  return (req, res, next) => {
    // `originalUrl`: the path as the client sent it, also under a mount point.
    const pathname = req.originalUrl.split('?')[0] ?? ''
    const answer = answerMetadata(metadata, req.method, pathname)
    if (answer === undefined) {
      next()
      return
    }
    res.statusCode = answer.status
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value)
    res.end(answer.body)
  }
}

export type { AuthContext } from './auth.js'
