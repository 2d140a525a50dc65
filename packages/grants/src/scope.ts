import { OAuthError } from './errors.js'

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/**
 * The scopes a request gets: all of `allowed` when none are asked for, else exactly the ones
 * asked for, each of which must be allowed (scope narrows, never widens).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.3
 */
export function narrowScope(requested: string | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined) return [...allowed]
  const asked = requested.split(' ').filter((token) => token !== '')
  if (asked.length === 0) return [...allowed]
  for (const token of asked) {
    if (!SCOPE_TOKEN.test(token)) throw new OAuthError('invalid_scope', 'malformed scope value')
  }
  const granted = [...new Set(asked)]
  const outside = granted.filter((token) => !allowed.includes(token))
  if (outside.length > 0) {
    throw new OAuthError('invalid_scope', `scope not allowed for this client: ${outside.join(' ')}`)
  }
  return granted
}
