import { fileURLToPath } from 'node:url'
import { startIssuerProcess } from '@tessera/test-support'
import type { IssuerProcess } from '@tessera/test-support'

export { clientCredentialsToken, loopbackFetch, passwordToken } from '@tessera/test-support'
export type { IssuerProcess } from '@tessera/test-support'

export const ISSUER_FIXTURE = fileURLToPath(new URL('../fixtures/issuer/', import.meta.url))
export const JWT_SECRET = 'verifier-e2e-secret-0123456789-abcdefgh'

/** A real issuer (`tessera dev`) on loopback, serving this package's fixture tenants. */
export function startIssuer(config = ISSUER_FIXTURE): Promise<IssuerProcess> {
  return startIssuerProcess({ config, jwtSecret: JWT_SECRET })
}
