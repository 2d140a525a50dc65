import type { Client, DynamicClientsConfig } from '@tessera/config-schema'
import type { RegisteredClientRecord } from '../dynamic-ports.js'
import { OAuthError } from '../errors.js'
import { parseClientMetadata } from './metadata.js'
import type { ClientMetadata } from './metadata.js'

/** The `Client` that registered metadata defines. */
export function clientFromMetadata(
  clientId: string,
  metadata: ClientMetadata,
  secretHash: string | undefined,
): Client {
  return {
    clientId,
    ...(metadata.client_name === undefined ? {} : { name: metadata.client_name }),
    grantTypes: [...metadata.grant_types],
    redirectUris: [...metadata.redirect_uris],
    postLogoutRedirectUris: [],
    scopes: metadata.scope.split(' '),
    introspection: 'own',
    tokenEndpointAuthMethod: metadata.token_endpoint_auth_method,
    ...(secretHash === undefined ? {} : { clientSecretHash: secretHash }),
    dynamic: { kind: 'registered' },
  }
}

/**
 * The stored metadata of a registration, read back: validated again, and its scope narrowed to
 * the tenant's current dynamic scopes, so a scope the configuration no longer lists is no
 * registered client's either. Undefined when it does not pass today's rules (or the row is
 * damaged), or when it names no scope the tenant allows: such a client is treated as unknown.
 */
export function readStoredMetadata(
  record: RegisteredClientRecord,
  config: Pick<DynamicClientsConfig, 'scopes'>,
): ClientMetadata | undefined {
  try {
    return parseClientMetadata(record.metadata, config.scopes)
  } catch (error) {
    if (error instanceof OAuthError) return undefined
    throw error
  }
}

/**
 * The `Client` a stored registration defines, as /authorize, /token, /revoke and /introspect
 * see it; undefined when its metadata is no longer usable (see {@link readStoredMetadata}) or
 * it is inconsistent (a secret method without a secret hash).
 */
export function registeredClient(
  record: RegisteredClientRecord,
  config: Pick<DynamicClientsConfig, 'scopes'>,
): Client | undefined {
  const metadata = readStoredMetadata(record, config)
  if (metadata === undefined) return undefined
  const confidential = metadata.token_endpoint_auth_method !== 'none'
  if (confidential !== (record.secretHash !== undefined)) return undefined
  return clientFromMetadata(record.clientId, metadata, record.secretHash)
}
