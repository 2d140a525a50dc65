/**
 * Resource indicators (RFC 8707): the URIs of a tenant's resource servers, and the one comparison
 * the issuer applies to them.
 *
 * @module
 */

// RFC 3986 §3: scheme, then an optional `//authority`, then the rest (path, query).
const ABSOLUTE = /^([a-z][a-z0-9+.-]*):(\/\/([^/?#]*))?(.*)$/is
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' }

/**
 * The form two resource URIs are compared in: scheme and host lower-cased, a default port
 * (80 for http, 443 for https) dropped, everything else as written. `undefined` when `uri` is
 * not an absolute URI without a fragment.
 *
 * @see RFC 8707 §2 (the resource parameter), RFC 3986 §6.2.2.1 and §6.2.3 (case and port)
 */
export function normaliseResourceUri(uri: string): string | undefined {
  if (/\s/.test(uri) || uri.includes('#') || !URL.canParse(uri)) return undefined
  const match = ABSOLUTE.exec(uri)
  if (match === null) return undefined
  const scheme = (match[1] ?? '').toLowerCase()
  const rest = match[4] ?? ''
  const authority = match[3]
  if (authority === undefined) return `${scheme}:${rest}`
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1)
  const hostPort = authority.slice(at + 1)
  // An IPv6 literal holds colons of its own: the port follows its closing bracket.
  const portMatch = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(hostPort)
  if (portMatch === null) return undefined
  const host = (portMatch[1] ?? '').toLowerCase()
  const port = portMatch[2]
  const keep = port !== undefined && port !== '' && port !== DEFAULT_PORTS[scheme]
  return `${scheme}://${userinfo}${host}${keep ? `:${port}` : ''}${rest}`
}
