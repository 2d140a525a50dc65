import type { ConfigIssue, Tenant } from '@tessera/config-schema'

/** How to make a KEY_ENCRYPTION_SECRET, for the messages that ask for one. */
export const MAKE_KEY_ENCRYPTION_SECRET = 'openssl rand -base64 32'

/**
 * Why `tessera start` cannot serve `tenants`, or undefined when it can: an RS256 tenant's
 * private keys are stored in the database, and without KEY_ENCRYPTION_SECRET they would be
 * stored in clear, so that anyone who reads the database (a backup, a replica's disk) could sign
 * its tokens. `dev` serves them all the same; the CLI warns about it at start-up.
 *
 * One issue names every such tenant, so that the refusal is one line.
 */
export function keyEncryptionIssue(
  tenants: readonly Tenant[],
  keyEncryptionSecret: string | undefined,
  mode: 'dev' | 'start',
): ConfigIssue | undefined {
  if (mode !== 'start' || keyEncryptionSecret !== undefined) return undefined
  const names = tenants
    .filter((tenant) => tenant.jwtAlgorithm === 'RS256')
    .map((tenant) => `"${tenant.name}"`)
  if (names.length === 0) return undefined
  const which =
    names.length === 1
      ? `RS256 tenant ${names.join('')} (its private keys`
      : `RS256 tenants ${names.join(', ')} (their private keys`
  return {
    file: 'environment',
    line: 0,
    path: 'KEY_ENCRYPTION_SECRET',
    message:
      `not set: tessera start refuses to serve ${which} would be stored in clear); ` +
      `make a secret with: ${MAKE_KEY_ENCRYPTION_SECRET}`,
  }
}
