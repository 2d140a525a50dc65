import type { Client } from '@tessera/config-schema'
import type { TenantContext } from './context.js'

/**
 * The client a request names: a client of the tenant file (client_ids compared
 * case-insensitively, they are UUIDs) first, so a listed client always wins; else a dynamic
 * client (a registration or a metadata document URL, compared as sent).
 *
 * @throws OAuthError `invalid_client` for a metadata document that cannot be used
 */
export async function findClient(
  tenant: Pick<TenantContext, 'clients' | 'dynamicClients'>,
  clientId: string,
): Promise<Client | undefined> {
  return tenant.clients.get(clientId.toLowerCase()) ?? (await tenant.dynamicClients?.find(clientId))
}
