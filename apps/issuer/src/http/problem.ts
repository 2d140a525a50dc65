import { STATUS_CODES } from 'node:http'
import { KeyError } from '@tessera/keys'
import { StoreError } from '@tessera/store'
import type { Context } from 'koa'
import type { Logger } from 'pino'
import { KeyAdminError } from '../keys/key-admin.js'
import type { KeyAdminErrorCode } from '../keys/key-admin.js'
import { HttpError } from './http-error.js'

/**
 * RFC 9457 problem details: the error body of the admin API. The OAuth endpoints keep RFC 6749's
 * `{ error, error_description }`; this API is not OAuth, and its clients (scripts, dashboards)
 * read the problem format that HTTP APIs share.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export interface Problem {
  /** `about:blank` when the status says it all (RFC 9457 §4.2.1), else one of {@link PROBLEM_TYPES}. */
  type: string
  title: string
  status: number
  /** Specific to this occurrence; safe to show, never a secret. */
  detail: string
}

/**
 * The problem types of the admin API beyond the plain HTTP statuses. They are identifiers (tag
 * URIs, RFC 4151), not addresses: docs/admin-api.md describes each.
 */
export const PROBLEM_TYPES = {
  unknownTenant: 'tag:tessera.dev,2026:problem:unknown-tenant',
  unknownKid: 'tag:tessera.dev,2026:problem:unknown-kid',
  notRs256: 'tag:tessera.dev,2026:problem:not-rs256',
} as const

const KEY_ADMIN_PROBLEMS: Readonly<
  Record<KeyAdminErrorCode, { type: string; title: string; status: number }>
> = {
  ERR_UNKNOWN_TENANT: { type: PROBLEM_TYPES.unknownTenant, title: 'Unknown tenant', status: 404 },
  ERR_UNKNOWN_KID: { type: PROBLEM_TYPES.unknownKid, title: 'Unknown key', status: 404 },
  // The request is sound but the tenant's configuration does not allow it (RFC 9110 §15.5.10).
  ERR_NOT_RS256: { type: PROBLEM_TYPES.notRs256, title: 'Tenant does not use RS256', status: 409 },
}

/** How long a client should wait after the database was away or a key insert kept losing. */
const RETRY_AFTER_SECONDS = 5

/** An error the admin edge raises itself (authentication, throttling, request shape). */
export class ProblemError extends Error {
  override readonly name = 'ProblemError'
  readonly status: number
  readonly detail: string
  readonly headers: Readonly<Record<string, string>>

  constructor(status: number, detail: string, headers: Readonly<Record<string, string>> = {}) {
    super(detail)
    this.status = status
    this.detail = detail
    this.headers = headers
  }
}

interface Rendered {
  problem: Problem
  headers: Readonly<Record<string, string>>
}

const plain = (status: number, detail: string): Problem => ({
  type: 'about:blank',
  title: STATUS_CODES[status] ?? 'Error',
  status,
  detail,
})

/** The answer to a known error, or undefined for an unexpected one. */
function render(error: unknown): Rendered | undefined {
  if (error instanceof ProblemError) {
    return { problem: plain(error.status, error.detail), headers: error.headers }
  }
  if (error instanceof KeyAdminError) {
    return { problem: { ...KEY_ADMIN_PROBLEMS[error.code], detail: error.message }, headers: {} }
  }
  // Body, method and size problems of the shared HTTP layer (405 with Allow, 413, 415, 400).
  if (error instanceof HttpError && error.status < 500) {
    return { problem: plain(error.status, error.description), headers: error.headers }
  }
  const unavailable =
    (error instanceof StoreError && error.code === 'ERR_STORE_UNAVAILABLE') ||
    (error instanceof KeyError && error.code === 'ERR_KEY_CONFLICT')
  if (unavailable) {
    return {
      problem: plain(503, 'the key store cannot complete this now; retry later'),
      headers: { 'Retry-After': `${RETRY_AFTER_SECONDS}` },
    }
  }
  return undefined
}

/**
 * Answers `error` as `application/problem+json`. Anything unexpected is logged with its cause
 * and answered as a bare 500, so no message or stack reaches the client.
 */
export function respondWithProblem(ctx: Context, error: unknown, logger: Logger): void {
  let rendered = render(error)
  if (rendered === undefined || rendered.problem.status >= 500) {
    logger.error({ err: error, method: ctx.method, path: ctx.path }, 'admin request failed')
  }
  rendered ??= { problem: plain(500, 'internal error'), headers: {} }
  ctx.status = rendered.problem.status
  ctx.set('Cache-Control', 'no-store')
  for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value)
  ctx.body = rendered.problem
  // After the body: Koa sets application/json for an object body.
  ctx.type = 'application/problem+json'
}
