/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592): the answers of
 * POST /register and of GET, PUT and DELETE on a client's registration client URI, as plain
 * values; the issuer maps them (and the `OAuthError`s thrown) to HTTP.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import type { DynamicClientsConfig } from '@tessera/config-schema'
import { randomToken, sha256Hex } from '../crypto.js'
import type {
  ClientRegistrationStore,
  ConsentStore,
  RegisteredClientRecord,
} from '../dynamic-ports.js'
import { OAuthError } from '../errors.js'
import {
  bearerToken,
  checkInitialAccessToken,
  countRegistration,
  invalidToken,
  tokenMatchesHash,
} from './admission.js'
import type { RegistrationRateDeps } from './admission.js'
import { parseClientMetadata } from './metadata.js'
import type { ClientMetadata } from './metadata.js'
import { readStoredMetadata } from './registered-client.js'

/** The tenant a registration request is for. */
export interface RegistrationTenant {
  name: string
  /** The tenant's issuer URL: registration client URIs are `<issuer>/register/<client_id>`. */
  issuer: string
  config: DynamicClientsConfig
}

/** What registration needs: the store's registrations and consents, and the throttle. */
export interface RegistrationDeps extends RegistrationRateDeps {
  registrations: ClientRegistrationStore
  /** When given, deleting a registration forgets the users' consents to it. */
  consents?: ConsentStore
}

/** A request to POST /register, before its body is read. */
export interface RegistrationAdmission {
  /** The raw `Authorization` header, if any. */
  authorization: string | undefined
  /** The client's network address: registrations are counted per address. */
  address: string
}

/** A request to a registration client URI (RFC 7592). */
export interface RegistrationManagementRequest {
  /** The client_id of the URI, as sent. */
  clientId: string
  /** The raw `Authorization` header, if any: the registration access token. */
  authorization: string | undefined
}

/** The client information response (RFC 7591 §3.2.1, RFC 7592 §3) as JSON. */
export type ClientInformation = Record<string, unknown>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// Compared against when the client is unknown, so that the time taken does not tell.
const UNKNOWN_CLIENT_HASH = sha256Hex('unknown client')
const MEDIA_TYPE = /^\s*application\/json\s*(;.*)?$/i

/**
 * Admits a POST /register before its body is read: counts it against the address's
 * registrations (429 past the limit), then checks the initial access token, when the tenant
 * requires one (401 `invalid_token`).
 */
export async function admitRegistration(
  request: RegistrationAdmission,
  tenant: RegistrationTenant,
  deps: RegistrationRateDeps,
): Promise<void> {
  await countRegistration(request.address, deps)
  checkInitialAccessToken(request.authorization, tenant.config.registrationToken)
}

/**
 * The JSON body of a registration or update request (RFC 7591 §3.1: `application/json`).
 *
 * @throws OAuthError `invalid_client_metadata` for another content type or malformed JSON
 */
export function parseRegistrationBody(text: string, contentType: string | undefined): unknown {
  if (contentType === undefined || !MEDIA_TYPE.test(contentType)) {
    throw new OAuthError('invalid_client_metadata', 'the request body must be application/json')
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new OAuthError('invalid_client_metadata', 'the request body is not valid JSON')
  }
}

/**
 * Registers a client (RFC 7591 §3.2.1): a UUID client_id, a secret for a confidential method
 * and a registration access token, each random and answered once, stored as SHA-256 digests.
 *
 * @throws OAuthError `invalid_redirect_uri` or `invalid_client_metadata` for metadata it does
 *   not accept, and `invalid_client_metadata` when the tenant holds `max_registrations` clients
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-3.2.1
 */
export async function registerClient(
  body: unknown,
  tenant: RegistrationTenant,
  deps: Pick<RegistrationDeps, 'registrations' | 'clock'>,
): Promise<ClientInformation> {
  const metadata = parseClientMetadata(body, tenant.config.scopes)
  const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : randomToken()
  const accessToken = randomToken()
  const now = deps.clock()
  const record: RegisteredClientRecord = {
    tenant: tenant.name,
    clientId: randomUUID(),
    ...(secret === undefined ? {} : { secretHash: sha256Hex(secret) }),
    registrationTokenHash: sha256Hex(accessToken),
    metadata: { ...metadata },
    createdAt: now,
    updatedAt: now,
  }
  const max = tenant.config.maxRegistrations
  if (!(await deps.registrations.registerClient(record, max))) {
    throw new OAuthError(
      'invalid_client_metadata',
      `this server holds its limit of ${max} registered clients; no more can be registered`,
    )
  }
  return clientInformation(record, metadata, tenant, accessToken, secret)
}

/**
 * The registration of a client (RFC 7592 §2.1), with the registration access token the request
 * presented. Its secret is not in it: only its digest is stored.
 */
export async function readRegistration(
  request: RegistrationManagementRequest,
  tenant: RegistrationTenant,
  deps: Pick<RegistrationDeps, 'registrations'>,
): Promise<ClientInformation> {
  const { record, token } = await authorizeManagement(request, tenant, deps)
  // Metadata stored under rules since tightened is answered as stored: the client may fix it.
  const metadata = readStoredMetadata(record, tenant.config) ?? record.metadata
  return clientInformation(record, metadata, tenant, token, undefined)
}

/**
 * Replaces the metadata of a registration (RFC 7592 §2.2): the body must name the client's own
 * `client_id`, may repeat its `client_secret` (which must match: a client cannot choose its
 * secret), and is validated as a new registration; fields left out are removed (their
 * defaults apply). The secret stays; a client cannot turn from public to confidential or back.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7592#section-2.2
 */
export async function updateRegistration(
  request: RegistrationManagementRequest & { body: unknown },
  tenant: RegistrationTenant,
  deps: Pick<RegistrationDeps, 'registrations' | 'clock'>,
): Promise<ClientInformation> {
  const { record, token } = await authorizeManagement(request, tenant, deps)
  const { body } = request
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'the request body must be a JSON object')
  }
  const sent = body as Record<string, unknown>
  if (typeof sent.client_id !== 'string' || sent.client_id.toLowerCase() !== record.clientId) {
    throw new OAuthError(
      'invalid_client_metadata',
      `client_id: must be ${record.clientId}, the client's own`,
    )
  }
  if (sent.client_secret !== undefined && sent.client_secret !== null) {
    const matches =
      typeof sent.client_secret === 'string' &&
      tokenMatchesHash(sent.client_secret, record.secretHash ?? UNKNOWN_CLIENT_HASH) &&
      record.secretHash !== undefined
    if (!matches) {
      throw new OAuthError(
        'invalid_client_metadata',
        "client_secret: does not match the client's secret; a client cannot choose its secret",
      )
    }
  }
  const metadata = parseClientMetadata(body, tenant.config.scopes)
  const confidential = metadata.token_endpoint_auth_method !== 'none'
  if (confidential !== (record.secretHash !== undefined)) {
    throw new OAuthError(
      'invalid_client_metadata',
      `token_endpoint_auth_method: a ${confidential ? 'public' : 'confidential'} client cannot become ${confidential ? 'confidential' : 'public'}; register a new client`,
    )
  }
  const updated: RegisteredClientRecord = {
    ...record,
    metadata: { ...metadata },
    updatedAt: deps.clock(),
  }
  if (!(await deps.registrations.updateRegisteredClient(updated))) throw notAuthorized()
  return clientInformation(updated, metadata, tenant, token, undefined)
}

/**
 * Deletes a registration (RFC 7592 §2.3) and forgets the users' consents to it: the client_id,
 * its secret and its registration access token stop working at once.
 */
export async function deleteRegistration(
  request: RegistrationManagementRequest,
  tenant: RegistrationTenant,
  deps: Pick<RegistrationDeps, 'registrations' | 'consents'>,
): Promise<void> {
  const { record } = await authorizeManagement(request, tenant, deps)
  if (!(await deps.registrations.deleteRegisteredClient(tenant.name, record.clientId))) {
    throw notAuthorized()
  }
  await deps.consents?.deleteConsents(tenant.name, record.clientId)
}

function notAuthorized(): OAuthError {
  return invalidToken('the registration access token is not valid for this client')
}

/**
 * The registration a management request may act on. An unknown client and a wrong token get
 * the same 401 `invalid_token` (RFC 7592 §2.1), in the same time, so that neither tells
 * whether the client exists.
 */
async function authorizeManagement(
  request: RegistrationManagementRequest,
  tenant: RegistrationTenant,
  deps: Pick<RegistrationDeps, 'registrations'>,
): Promise<{ record: RegisteredClientRecord; token: string }> {
  const token = bearerToken(request.authorization)
  if (token === undefined) {
    throw invalidToken('a registration access token is required: Authorization: Bearer')
  }
  // Registered client_ids are lower-case UUIDs; anything else names none, unasked.
  const record = UUID.test(request.clientId)
    ? await deps.registrations.findRegisteredClient(tenant.name, request.clientId.toLowerCase())
    : undefined
  const matches = tokenMatchesHash(token, record?.registrationTokenHash ?? UNKNOWN_CLIENT_HASH)
  if (record === undefined || !matches) throw notAuthorized()
  return { record, token }
}

/** The client information response: identifiers, credentials when answered, then the metadata. */
function clientInformation(
  record: RegisteredClientRecord,
  metadata: ClientMetadata | Readonly<Record<string, unknown>>,
  tenant: RegistrationTenant,
  registrationAccessToken: string,
  secret: string | undefined,
): ClientInformation {
  return {
    client_id: record.clientId,
    client_id_issued_at: Math.floor(record.createdAt / 1000),
    // RFC 7591 §3.2.1: 0, the secret does not expire.
    ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    registration_access_token: registrationAccessToken,
    registration_client_uri: `${tenant.issuer}/register/${record.clientId}`,
    ...metadata,
  }
}
