// RFC 8252 §7.3: only the IP literals count as loopback. `localhost` can be resolved elsewhere
// or listened on by another program first (§8.3), so it stays an exact match like any host.
// The port must be written as a browser writes it (no leading zero, 1–65535) for the request;
// after host and port, the rest of the URI (path and query) must follow byte for byte.
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d+))?([/?].*)?$/s

interface LoopbackParts {
  host: string
  port: string | undefined
  rest: string
}

function loopbackParts(uri: string): LoopbackParts | undefined {
  const match = LOOPBACK.exec(uri)
  if (match === null) return undefined
  return { host: match[1] ?? '', port: match[2], rest: match[3] ?? '' }
}

function isBrowserPort(port: string): boolean {
  return /^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65_535
}

/**
 * Whether `requested` is one of the client's registered redirect URIs: an exact string match
 * (RFC 9700 §4.1.3), except that a registered loopback URI (`http://127.0.0.1/…`,
 * `http://[::1]/…`, with or without a port) matches the same URI at any port, because a native
 * app listens on whatever port the system gives it.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8252#section-7.3
 */
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true
  const asked = loopbackParts(requested)
  if (asked === undefined || (asked.port !== undefined && !isBrowserPort(asked.port))) return false
  return registered.some((uri) => {
    const entry = loopbackParts(uri)
    return entry !== undefined && entry.host === asked.host && entry.rest === asked.rest
  })
}

/**
 * Whether `uri` is a loopback redirect URI (`http://127.0.0.1…`, `http://[::1]…`): one that any
 * program on the user's device can listen on, at whatever port the request names.
 */
export function isLoopbackRedirectUri(uri: string): boolean {
  return loopbackParts(uri) !== undefined
}
