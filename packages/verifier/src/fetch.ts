/**
 * Bearer-token verification for fetch-style handlers (`(request: Request) => Response`): Hono,
 * Next.js route handlers, `Deno.serve`-like servers on Node, itty-router, … Failures come back as
 * a ready RFC 6750 `Response`, the same as the Koa and Express adapters send.
 *
 * @example
 * ```ts
 * import { createVerifier } from '@tessera/verifier'
 * import { verifyRequest } from '@tessera/verifier/fetch'
 *
 * const verifier = createVerifier({ issuer: 'https://acme.example.com' })
 * export async function GET(request: Request): Promise<Response> {
 *   const result = await verifyRequest(request, verifier, { scope: 'orders:read' })
 *   if (!result.ok) return result.response
 *   return Response.json({ sub: result.auth.payload.sub })
 * }
 * ```
 *
 * @module
 */
import type { AuthContext } from './auth.js'
import { VerifierError } from './errors.js'
import { renderError } from './render.js'
import type { Verifier } from './verifier.js'
import { checkRealm, checkRequiredScopes, checkScopes } from './internal/bearer.js'
import { challengeOptions, createAuthenticator } from './internal/authenticate.js'
import { engineOf } from './internal/engine.js'
import { answerMetadata, metadataOf } from './internal/resource-metadata.js'

/** Options of {@link verifyRequest}. */
export interface VerifyRequestOptions {
  /** The realm of the `WWW-Authenticate` challenge. Default `api`. */
  realm?: string
  /** Scopes the token must all carry (space-separated or an array); else 403. */
  scope?: string | readonly string[]
}

/**
 * What {@link verifyRequest} reads of a request: a fetch `Request` fits. `method` and `url` (the
 * URL as the server received it) are needed by a verifier with the `dpop` option.
 */
export interface VerifiableRequest {
  readonly headers: Headers
  readonly method?: string
  readonly url?: string
}

/** What {@link verifyRequest} resolves to. */
export type VerifyRequestResult =
  | {
      ok: true
      /** The verified token, its claims and scopes. */
      auth: AuthContext
    }
  | {
      ok: false
      /** Why the request was refused. */
      error: VerifierError
      /** The RFC 6750 (or RFC 9449 DPoP) answer to send: 400, 401, 403 or 503. */
      response: Response
    }

/**
 * Verifies the bearer token of a fetch `Request` (and the scopes, when asked). Never throws for
 * a bad request: a refusal is `{ ok: false, response }`. Options are checked on each call and a
 * bad one throws a `TypeError`.
 *
 * @example
 * ```ts
 * const result = await verifyRequest(request, verifier)
 * if (!result.ok) return result.response
 * ```
 * @see RFC 6750 §2.1, §3
 */
export async function verifyRequest(
  request: VerifiableRequest,
  verifier: Verifier,
  options: VerifyRequestOptions = {},
): Promise<VerifyRequestResult> {
  const render = challengeOptions(verifier, checkRealm(options.realm, 'verifyRequest'))
  const required =
    options.scope === undefined ? [] : checkRequiredScopes(options.scope, 'verifyRequest')
  const { method, url } = request
  if (
    engineOf(verifier)?.dpop !== undefined &&
    (typeof method !== 'string' || typeof url !== 'string')
  ) {
    throw new TypeError('verifyRequest: a verifier with dpop needs the request method and url')
  }
  const proofRequest = () => ({
    method: method as string,
    url: url as string,
    proof: request.headers.get('dpop'),
  })
  try {
    const authenticate = createAuthenticator(verifier, render)
    const auth = await authenticate(request.headers.get('authorization'), proofRequest)
    if (required.length > 0) checkScopes(auth, required)
    return { ok: true, auth }
  } catch (error) {
    const refused =
      error instanceof VerifierError
        ? error
        : new VerifierError('ERR_TOKEN_INVALID', 'The access token is invalid', { cause: error })
    const { status, headers, body } = renderError(refused, render)
    return { ok: false, error: refused, response: new Response(body, { status, headers }) }
  }
}

/**
 * Serves the verifier's OAuth 2.0 Protected Resource Metadata (RFC 9728): answers GET and HEAD
 * for `/.well-known/oauth-protected-resource` and, when the resource has a path, for
 * `/.well-known/oauth-protected-resource{path}`, with the same JSON document
 * (`Cache-Control: public, max-age=3600`). Every other request, other methods on those paths
 * included, resolves to `undefined`, for the handler to answer. Throws a `TypeError` when the verifier has no `resourceMetadata`.
 *
 * @example
 * ```ts
 * const metadata = protectedResourceMetadataResponse(verifier, request)
 * if (metadata !== undefined) return metadata
 * ```
 * @see RFC 9728 §3
 */
export function protectedResourceMetadataResponse(
  verifier: Verifier,
  request: { readonly method: string; readonly url: string },
): Response | undefined {
  const metadata = metadataOf(verifier)
  if (metadata === undefined) {
    throw new TypeError(
      'protectedResourceMetadataResponse: the verifier was created without resourceMetadata',
    )
  }
  const answer = answerMetadata(metadata, request.method, new URL(request.url).pathname)
  if (answer === undefined) return undefined
  return new Response(request.method === 'HEAD' ? null : answer.body, {
    status: answer.status,
    headers: answer.headers,
  })
}

export type { AuthContext } from './auth.js'
