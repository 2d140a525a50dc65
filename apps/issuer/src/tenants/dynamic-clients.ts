import type { DynamicClientsConfig } from '@tessera/config-schema'
import type { ClientRegistrationStore, DynamicClientSource } from '@tessera/grants'
import type { MetadataDocumentClients } from '../client-metadata/metadata-documents.js'

export interface DynamicClientSourceOptions {
  tenant: string
  /** The tenant's `dynamic_clients`; undefined when it has none. */
  config: DynamicClientsConfig | undefined
  /** Registered clients (RFC 7591), when the store holds them. */
  registrations?: ClientRegistrationStore
  /** Clients named by a metadata document URL, for a tenant with `metadata_documents`. */
  metadataDocuments?: MetadataDocumentClients
}

/**
 * The clients of a tenant that its file does not list, or undefined when it allows none. A
 * `client_id` that is an https URL (or, with FETCH_ALLOW_PRIVATE_ADDRESSES, an http loopback
 * one) names a metadata document; nothing else does.
 */
export function createDynamicClientSource(
  options: DynamicClientSourceOptions,
): DynamicClientSource | undefined {
  const { config } = options
  if (config === undefined) return undefined
  const documents = config.metadataDocuments ? options.metadataDocuments : undefined
  return {
    async find(clientId) {
      if (/^https?:\/\//.test(clientId)) return documents?.find(clientId)
      return undefined
    },
  }
}
