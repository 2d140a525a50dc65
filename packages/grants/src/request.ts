import { OAuthError } from './errors.js'
import { findRepeatedKey } from './internal/repeated-key.js'

/** Token-request parameters: string values only, empty values dropped, no prototype. */
export type TokenParams = Readonly<Record<string, string>>

// Keys that would reach Object.prototype if anything downstream ever merged the parameters
// into a plain object; refusing them outright is simpler than proving nothing ever does.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

function invalid(description: string): OAuthError {
  return new OAuthError('invalid_request', description)
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
}

/**
 * Parses a token-endpoint body, form-encoded or JSON, into one flat parameter set, so that both
 * encodings behave identically. Throws `invalid_request` for anything else.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.2 — parameters sent without a value are
 *   treated as omitted, and request parameters must not be included more than once.
 */
export function parseTokenRequestBody(raw: string, contentType: string | undefined): TokenParams {
  const type = mediaType(contentType)
  if (type === 'application/x-www-form-urlencoded') return parseForm(raw)
  if (type === 'application/json') return parseJson(raw)
  throw invalid(
    'unsupported content type; send application/x-www-form-urlencoded or application/json',
  )
}

function checkName(key: string): void {
  if (FORBIDDEN_KEYS.has(key)) throw invalid(`parameter "${safeName(key)}" is not allowed`)
}

function parseForm(raw: string): TokenParams {
  const params: Record<string, string> = Object.create(null) as Record<string, string>
  for (const [key, value] of new URLSearchParams(raw)) {
    checkName(key)
    if (Object.hasOwn(params, key)) {
      // RFC 8707 §2: `resource` may be repeated, but a token is for one audience only.
      if (key === 'resource') {
        throw new OAuthError('invalid_target', 'a token request names at most one resource')
      }
      throw invalid(`parameter "${safeName(key)}" is repeated`)
    }
    params[key] = value
  }
  // Empty values count as absent; deleting after the loop keeps "repeated" detection exact.
  for (const key of Object.keys(params)) if (params[key] === '') delete params[key]
  return params
}

function parseJson(raw: string): TokenParams {
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    throw invalid('the request body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('the request body must be a JSON object')
  }
  // As with a repeated form field (RFC 6749 §3.2): JSON.parse would keep the last value silently.
  const repeated = findRepeatedKey(raw)
  if (repeated !== undefined) {
    throw invalid(
      repeated.depth === 0
        ? `parameter "${safeName(repeated.key)}" is repeated`
        : `name "${safeName(repeated.key)}" is repeated in a nested object`,
    )
  }
  const params: Record<string, string> = Object.create(null) as Record<string, string>
  const fields = body as Record<string, unknown>
  for (const key of Object.keys(fields)) {
    checkName(key)
    const value = fields[key]
    if (typeof value !== 'string') throw invalid(`parameter "${safeName(key)}" must be a string`)
    // Empty values count as absent.
    if (value !== '') params[key] = value
  }
  return params
}

/** Parameter names are echoed in error descriptions; keep them short and printable. */
function safeName(key: string): string {
  const printable = key.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '?')
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable
}
