/**
 * `allowed_origins` entries: web origins written exactly as a browser sends them in the `Origin`
 * header, so that the issuer can compare them byte for byte.
 *
 * @module
 */
import * as z from 'zod'

// The shape of a serialized http(s) origin (RFC 6454 §6.2): lower-case scheme and host (DNS
// name, IPv4, or bracketed IPv6), optional port, nothing after. Written without regex flags so
// that it carries over into the CRD's JSON Schema `pattern` unchanged.
const ORIGIN =
  /^https?:\/\/(?:[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_.])?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/

const MAX_ORIGIN_LENGTH = 300

/**
 * What is wrong with `value` as an origin, worded for someone editing YAML; undefined when it is
 * one. A value that a browser would send differently gets the browser's spelling as a hint.
 */
export function originProblem(value: string): string | undefined {
  if (value.length > MAX_ORIGIN_LENGTH) {
    return `must have at most ${MAX_ORIGIN_LENGTH} characters`
  }
  if (value.includes('*')) {
    return 'must be one origin: wildcards are not allowed, list each origin'
  }
  // `Origin: null` is sent by sandboxed frames, file: pages and redirected requests alike:
  // allowing it would allow every one of them.
  if (value.trim().toLowerCase() === 'null') {
    return 'must not be null: sandboxed frames and file: pages all send "null"'
  }
  if (/\s/.test(value) || !URL.canParse(value)) {
    return 'must be an origin: http(s)://host[:port], e.g. https://app.example.com'
  }
  const url = new URL(value)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `scheme "${url.protocol}" is not allowed; an origin is http:// or https://`
  }
  if (url.username !== '' || url.password !== '' || value.includes('@')) {
    return 'must not contain user information (user@)'
  }
  if (value.includes('#')) return 'must not contain a fragment (#)'
  if (value.includes('?')) return 'must not contain a query (?)'
  const written = value.toLowerCase()
  if (
    !written.startsWith(`${url.protocol}//`) ||
    written.slice(url.protocol.length + 2).includes('/')
  ) {
    return url.pathname === '/' && value.endsWith('/')
      ? `must not end with a slash; write ${url.origin}`
      : `must not contain a path; write ${url.origin}`
  }
  // Browsers lower-case scheme and host, drop a default port and write IDNs in punycode;
  // the Origin header is compared byte for byte, so the entry must already be that form.
  if (value !== url.origin) return `must be written as browsers send it: ${url.origin}`
  return undefined
}

/** One `allowed_origins` entry: a serialized http(s) origin. */
export const OriginSchema = z
  .string()
  .regex(ORIGIN, {
    error: (issue) =>
      (typeof issue.input === 'string' ? originProblem(issue.input) : undefined) ??
      'must be an origin: http(s)://host[:port], lower case, e.g. https://app.example.com',
  })
  .superRefine((value, ctx) => {
    // What the pattern cannot say (port range, IPv6 syntax, a written default port); the
    // pattern has reported values it refused already.
    if (!ORIGIN.test(value)) return
    const problem = originProblem(value)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
  })
