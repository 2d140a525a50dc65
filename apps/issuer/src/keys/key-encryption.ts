import type { ConfigIssue, Tenant } from '@tessera/config-schema'
import { hasOpenIdClients } from '../openid/id-token-keys.js'

/** How to make a KEY_ENCRYPTION_SECRET, for the messages that ask for one. */
export const MAKE_KEY_ENCRYPTION_SECRET = 'openssl rand -base64 32'

/**
 * Why `tessera start` cannot serve `tenants`, or undefined when it can: the private keys of an
 * RS256 tenant, and of an HS256 tenant with OpenID Connect clients (its ID tokens are RS256), are
 * stored in the database, and without KEY_ENCRYPTION_SECRET they would be stored in clear, so
 * that anyone who reads the database (a backup, a replica's disk) could sign its tokens. `dev`
 * serves them all the same; the CLI warns about it at start-up.
 *
 * One issue names every such tenant, so that the refusal is one line.
 */
export function keyEncryptionIssue(
  tenants: readonly Tenant[],
  keyEncryptionSecret: string | undefined,
  mode: 'dev' | 'start',
): ConfigIssue | undefined {
  if (mode !== 'start' || keyEncryptionSecret !== undefined) return undefined
  const quoted = (list: readonly Tenant[]): string[] => list.map((tenant) => `"${tenant.name}"`)
  const rs256 = quoted(tenants.filter((tenant) => tenant.jwtAlgorithm === 'RS256'))
  const openId = quoted(
    tenants.filter((tenant) => tenant.jwtAlgorithm === 'HS256' && hasOpenIdClients(tenant)),
  )
  const count = rs256.length + openId.length
  if (count === 0) return undefined
  const groups = [
    ...(rs256.length === 0 ? [] : [`${plural('RS256 tenant', rs256)} ${rs256.join(', ')}`]),
    ...(openId.length === 0
      ? []
      : [`${plural('HS256 tenant', openId)} ${openId.join(', ')} with OpenID Connect clients`]),
  ]
  const which = `${groups.join(' and ')} (${count === 1 ? 'its' : 'their'} private keys`
  return {
    file: 'environment',
    line: 0,
    path: 'KEY_ENCRYPTION_SECRET',
    message:
      `not set: tessera start refuses to serve ${which} would be stored in clear); ` +
      `make a secret with: ${MAKE_KEY_ENCRYPTION_SECRET}`,
  }
}

function plural(noun: string, names: readonly string[]): string {
  return names.length === 1 ? noun : `${noun}s`
}
