/**
 * Host names as the issuer matches them against the `Host` header.
 *
 * @module
 */

/**
 * Reduces a host (a configured one or a `Host` header value) to the form tenants are matched on:
 * lower case, without the port, without a trailing dot; IPv6 literals keep their brackets.
 *
 * @example
 * normaliseHost('Acme.LOCALHOST:3000') // 'acme.localhost'
 * normaliseHost('[::1]:3000') // '[::1]'
 * @see docs/routing.md (tenants are chosen by Host, case-insensitively, the port ignored)
 * @see RFC 9110 §7.2 (Host header: uri-host [ ":" port ])
 */
export function normaliseHost(host: string): string {
  const value = host.trim().toLowerCase()
  if (value.startsWith('[')) {
    const end = value.indexOf(']')
    return end === -1 ? value : value.slice(0, end + 1)
  }
  const colon = value.indexOf(':')
  // More than one colon and no brackets: a bare IPv6 literal, which cannot carry a port.
  if (colon !== -1 && value.indexOf(':', colon + 1) !== -1) return `[${value}]`
  const name = colon === -1 ? value : value.slice(0, colon)
  // `example.com.` is the fully qualified spelling of `example.com` (RFC 1034 §3.1).
  return name.endsWith('.') ? name.slice(0, -1) : name
}
