/**
 * The issuer's source of the clients a tenant file does not list: registrations in the store
 * (RFC 7591) and, when the tenant accepts them, client ID metadata documents.
 *
 * @module
 */
import type { Client, DynamicClientsConfig, Tenant } from '@tessera/config-schema'
import { registeredClient } from '@tessera/grants'
import type { ClientRegistrationStore, DynamicClientSource, TenantContext } from '@tessera/grants'
import { metadataDocumentClients } from '../client-metadata/metadata-documents.js'
import type { ClientDocuments } from '../client-metadata/metadata-documents.js'

/** Where clients named by an https URL come from (client ID metadata documents). */
export interface MetadataDocumentClients {
  /**
   * The client the document at `url` defines; undefined when it names none. Throws an
   * `OAuthError` `invalid_client` for a document that cannot be used.
   */
  find(url: string): Promise<Client | undefined>
}

export interface DynamicClientSourceOptions {
  /** The tenant's name, as the store keys its registrations. */
  tenant: string
  /** The tenant's `dynamic_clients`; absent when it allows none. */
  config: DynamicClientsConfig | undefined
  registrations: ClientRegistrationStore
  metadataDocuments?: MetadataDocumentClients
}

// Registered client_ids are generated UUIDs, stored in lower case.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The tenant's dynamic clients; undefined when it allows none. A registered client is found
 * while `registration` is on (turning it off stops the clients registered before, without
 * deleting them), as its stored metadata allows today (see `registeredClient`); an https
 * client_id goes to the metadata documents while `metadata_documents` is on. Listed clients are
 * looked up before this source (`findClient`), so a configured client_id always wins.
 */
export function createDynamicClientSource(
  options: DynamicClientSourceOptions,
): DynamicClientSource | undefined {
  const { tenant, config, registrations, metadataDocuments } = options
  if (config === undefined) return undefined
  return {
    async find(clientId) {
      // https, or (FETCH_ALLOW_PRIVATE_ADDRESSES) http to loopback: the documents' rules decide.
      if (/^https?:\/\//.test(clientId)) {
        return config.metadataDocuments ? metadataDocuments?.find(clientId) : undefined
      }
      if (!config.registration || !UUID.test(clientId)) return undefined
      const record = await registrations.findRegisteredClient(tenant, clientId.toLowerCase())
      return record === undefined ? undefined : registeredClient(record, config)
    },
  }
}

/**
 * The `dynamicClients` of a tenant's grant context: its registrations and, when it accepts
 * them, the process's metadata documents; none without a registration store or for a tenant
 * that allows no dynamic clients.
 */
export function tenantDynamicClients(
  tenant: Tenant,
  stores: { registrations?: ClientRegistrationStore; clientDocuments?: ClientDocuments },
): Pick<TenantContext, 'dynamicClients'> {
  const { registrations, clientDocuments } = stores
  if (registrations === undefined) return {}
  const config = tenant.dynamicClients
  const dynamicClients = createDynamicClientSource({
    tenant: tenant.name,
    config,
    registrations,
    ...(config?.metadataDocuments === true && clientDocuments !== undefined
      ? { metadataDocuments: metadataDocumentClients(clientDocuments, config.scopes) }
      : {}),
  })
  return dynamicClients === undefined ? {} : { dynamicClients }
}
