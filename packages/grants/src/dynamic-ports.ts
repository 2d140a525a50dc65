/**
 * Ports of the clients a tenant file does not list: registrations (RFC 7591/7592) and the
 * users' consents to such clients. Adapters live in @tessera/store.
 *
 * @module
 */
import type { Client } from '@tessera/config-schema'

/** One registered client (RFC 7591), as stored. */
export interface RegisteredClientRecord {
  tenant: string
  /** A generated UUID, lower case. */
  clientId: string
  /** SHA-256 of the client secret, lower-case hex; absent for a public client. */
  secretHash?: string
  /** SHA-256 of the registration access token (RFC 7592), lower-case hex. */
  registrationTokenHash: string
  /** The client metadata as registered and normalised (RFC 7591 §2), a JSON object. */
  metadata: Record<string, unknown>
  /** Epoch milliseconds. */
  createdAt: number
  /** Epoch milliseconds of the last change (registration or RFC 7592 update). */
  updatedAt: number
}

/**
 * Registered clients of every tenant, shared by all replicas. Registrations do not expire: they
 * live until deleted.
 */
export interface ClientRegistrationStore {
  /**
   * Stores a new registration unless the tenant already holds `max` of them; atomic across
   * replicas, so concurrent registrations never push a tenant past `max`. Resolves to false,
   * storing nothing, when the tenant is full; rejects, storing nothing, when the tenant already
   * has a client of this `clientId` (a `StoreError` `ERR_STORE_CONFLICT` of @tessera/store).
   * `max` is a positive integer; the hashes are SHA-256 in lower-case hex, anything else is
   * refused with a TypeError.
   */
  registerClient(record: RegisteredClientRecord, max: number): Promise<boolean>
  /**
   * The registration of a `clientId`, as sent by a client: one that no registration can have
   * (empty, U+0000, longer than 2048 characters) finds none, without an error.
   */
  findRegisteredClient(
    tenant: string,
    clientId: string,
  ): Promise<RegisteredClientRecord | undefined>
  /**
   * Replaces the metadata, secret hash and `updatedAt` of an existing registration (RFC 7592
   * §2.2); resolves to false when there is none. `createdAt` and the registration token stay.
   */
  updateRegisteredClient(record: RegisteredClientRecord): Promise<boolean>
  /**
   * Deletes a registration (RFC 7592 §2.3); resolves to false when there was none. Its consents
   * stay: the caller deletes them with `ConsentStore.deleteConsents`.
   */
  deleteRegisteredClient(tenant: string, clientId: string): Promise<boolean>
}

/** A user's consent to a dynamic client, for some scopes and resources. */
export interface ConsentRecord {
  tenant: string
  /** The user's `sub`. */
  subject: string
  clientId: string
  /** The resources the sign-in named, sorted and joined by spaces; `''` for none. */
  resources: string
  /** The scopes consented to. */
  scopes: string[]
  /** Epoch milliseconds. */
  expiresAt: number
}

/** Remembered consents, shared by all replicas; expired ones are purged with the other grants. */
export interface ConsentStore {
  /**
   * Records a consent, replacing the scopes and expiry of any earlier one of the same tenant,
   * subject, client and resources.
   */
  saveConsent(consent: ConsentRecord): Promise<void>
  /**
   * The live consent of a tenant, subject, client and resources: undefined when none, or expired
   * (`expiresAt` ≤ `now`).
   */
  findConsent(
    tenant: string,
    subject: string,
    clientId: string,
    resources: string,
    now: number,
  ): Promise<ConsentRecord | undefined>
  /** Forgets every consent to a client (its registration was deleted). */
  deleteConsents(tenant: string, clientId: string): Promise<void>
}

/**
 * The clients of a tenant that its file does not list: registered ones, and clients named by a
 * metadata document URL.
 */
export interface DynamicClientSource {
  /**
   * The client a `client_id` names, exactly as sent; undefined when it names none. Throws an
   * `OAuthError` `invalid_client` when it names a metadata document that cannot be used
   * (unreachable, too large, malformed), its description saying why.
   */
  find(clientId: string): Promise<Client | undefined>
}
