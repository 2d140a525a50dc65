import { VerifierError } from './errors.js'
import type { AuthScheme } from './errors.js'
import { DPOP_ALGORITHMS } from './internal/dpop-options.js'

/** Options of {@link renderError}. */
export interface RenderOptions {
  /**
   * The protection space named in `WWW-Authenticate` (RFC 7235 §2.2). Default `api`. Only the
   * characters RFC 6750 §3 allows in quoted values: `%x20-21 / %x23-5B / %x5D-7E`.
   */
  realm?: string
  /**
   * The URL of the resource's RFC 9728 metadata, named as `resource_metadata` in every
   * challenge (RFC 9728 §5.1). Left out when absent or not quotable.
   */
  resourceMetadata?: string | undefined
  /**
   * The verifier's DPoP settings, when it has the `dpop` option: a request without a token is
   * then offered a `DPoP` challenge beside the `Bearer` one, or alone when `required`.
   */
  dpop?: { required?: boolean | undefined } | undefined
}

/** The JSON body of an error response: the fields of the challenge, without `realm`. */
export interface ErrorBody {
  /** The RFC 6750 §3.1 error code; absent when the request carried no token. */
  error?:
    | 'invalid_request'
    | 'invalid_token'
    | 'insufficient_scope'
    | 'temporarily_unavailable'
    | 'invalid_dpop_proof'
  /** A human-readable sentence in RFC 6750's allowed characters. */
  error_description: string
  /** The scopes the route requires, for `insufficient_scope`. */
  scope?: string
}

/** An HTTP error response, the same in every adapter. */
export interface ErrorResponse {
  /** 400, 401, 403 or 503; never 500. */
  status: 400 | 401 | 403 | 503
  /** Lower-case header names: `www-authenticate` or `retry-after`, `content-type`, `cache-control`. */
  headers: Record<string, string>
  /** The serialised {@link ErrorBody}. */
  body: string
}

/** The default realm of the `WWW-Authenticate` challenge. */
export const DEFAULT_REALM = 'api'

// RFC 6750 §3: realm, error_description and scope values are quoted strings restricted to
// %x20-21 / %x23-5B / %x5D-7E (printable ASCII without `"` and `\`).
const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const NOT_QUOTABLE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g
// RFC 6750 §3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/** Whether `value` may appear inside a quoted value of an RFC 6750 challenge. */
export function isQuotable(value: string): boolean {
  return QUOTABLE.test(value)
}

/** Whether `value` is an RFC 6750 `scope-token`. */
export function isScopeToken(value: string): boolean {
  return SCOPE_TOKEN.test(value)
}

const MAX_DESCRIPTION = 200

function quotable(value: string): string {
  return value.replace(NOT_QUOTABLE, '?').slice(0, MAX_DESCRIPTION)
}

const GENERIC_INVALID = 'The access token is invalid'

/**
 * Renders any error thrown by a verifier or an adapter as an RFC 6750 response. The one renderer
 * all adapters share, so Koa, Express and fetch answer byte for byte alike.
 *
 * - no token → 401, `WWW-Authenticate: Bearer realm="…"` without an error code (§3.1);
 * - malformed `Authorization` header → 400 `invalid_request`;
 * - a refused token → 401 `invalid_token`;
 * - a missing scope → 403 `insufficient_scope` with `scope="…"`;
 * - with `resourceMetadata`, every challenge (400, 401, 403) also names it (RFC 9728 §5.1);
 * - an error whose `scheme` is `DPoP` is answered with a `DPoP` challenge naming the accepted
 *   proof algorithms (`algs`, RFC 9449 §7.1): a refused proof as `invalid_dpop_proof`, a
 *   bound token sent as `Bearer` (or any `Bearer` token when DPoP is required) as `invalid_token`;
 * - with `dpop`, a request without a token gets both a `Bearer` and a `DPoP` challenge (only
 *   `DPoP` when required);
 * - no usable signing keys, or a DPoP replay cache that fails → 503 with `Retry-After`: an
 *   outage is not the client's fault;
 * - anything else (never expected) → 401 `invalid_token` with a generic description: the
 *   request fails closed, and nothing of the error reaches the client.
 *
 * @example
 * ```ts
 * const { status, headers, body } = renderError(error, { realm: 'orders' })
 * ```
 * @see RFC 6750 §3 (The WWW-Authenticate Response Header Field)
 */
export function renderError(error: unknown, options: RenderOptions = {}): ErrorResponse {
  const realm = quotable(options.realm ?? DEFAULT_REALM)
  const metadata = options.resourceMetadata
  const common = { realm, metadata: metadata !== undefined && isQuotable(metadata) ? metadata : '' }
  const scheme: AuthScheme = error instanceof VerifierError ? (error.scheme ?? 'Bearer') : 'Bearer'
  const challenge = (status: 400 | 401 | 403, body: ErrorBody) =>
    challengeOf(status, [scheme], common, body)
  if (!(error instanceof VerifierError)) {
    return challenge(401, { error: 'invalid_token', error_description: GENERIC_INVALID })
  }
  const description = quotable(error.message)
  switch (error.code) {
    case 'ERR_TOKEN_MISSING': {
      const dpop = options.dpop
      const schemes: AuthScheme[] =
        dpop === undefined ? ['Bearer'] : dpop.required === true ? ['DPoP'] : ['Bearer', 'DPoP']
      return challengeOf(401, schemes, common, { error_description: description })
    }
    case 'ERR_DPOP_PROOF_INVALID':
      return challenge(401, { error: 'invalid_dpop_proof', error_description: description })
    case 'ERR_AUTHORIZATION_INVALID':
      return challenge(400, { error: 'invalid_request', error_description: description })
    case 'ERR_INSUFFICIENT_SCOPE': {
      const scope = (error.scope ?? '')
        .split(' ')
        .filter((token) => isScopeToken(token))
        .join(' ')
      return challenge(403, {
        error: 'insufficient_scope',
        error_description: description,
        ...(scope === '' ? {} : { scope }),
      })
    }
    case 'ERR_JWKS_UNAVAILABLE':
    case 'ERR_REPLAY_CACHE_UNAVAILABLE': {
      const seconds = Math.max(1, Math.ceil(error.retryAfter ?? 1))
      const body: ErrorBody = { error: 'temporarily_unavailable', error_description: description }
      return {
        status: 503,
        headers: { ...JSON_HEADERS, 'retry-after': String(seconds) },
        body: JSON.stringify(body),
      }
    }
    case 'ERR_TOKEN_TOO_LONG':
    case 'ERR_TOKEN_MALFORMED':
    case 'ERR_ALG_NOT_ALLOWED':
    case 'ERR_ISSUER_UNKNOWN':
    case 'ERR_KID_UNKNOWN':
    case 'ERR_TOKEN_INVALID':
    case 'ERR_TOKEN_EXPIRED':
    case 'ERR_CLAIM_INVALID':
    case 'ERR_DPOP_REQUIRED':
    case 'ERR_DPOP_NOT_BOUND':
      return challenge(401, { error: 'invalid_token', error_description: description })
  }
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' }

// RFC 9449 §7.1: the DPoP challenge names the proof algorithms the resource accepts.
const DPOP_ALGS = `algs="${DPOP_ALGORITHMS.join(' ')}"`

function challengeOf(
  status: 400 | 401 | 403,
  schemes: readonly AuthScheme[],
  common: { realm: string; metadata: string },
  body: ErrorBody,
): ErrorResponse {
  const params = [`realm="${common.realm}"`]
  // RFC 6750 §3.1: a request without authentication information gets no error attributes.
  if (body.error !== undefined) {
    params.push(`error="${body.error}"`, `error_description="${body.error_description}"`)
    if (body.scope !== undefined) params.push(`scope="${body.scope}"`)
  }
  const metadata = common.metadata === '' ? [] : [`resource_metadata="${common.metadata}"`]
  // Several challenges share one header, comma-separated (RFC 9110 §11.6.1).
  const challenges = schemes.map((scheme) =>
    scheme === 'DPoP'
      ? `DPoP ${[...params, DPOP_ALGS, ...metadata].join(', ')}`
      : `Bearer ${[...params, ...metadata].join(', ')}`,
  )
  return {
    status,
    headers: { ...JSON_HEADERS, 'www-authenticate': challenges.join(', ') },
    body: JSON.stringify(body),
  }
}
