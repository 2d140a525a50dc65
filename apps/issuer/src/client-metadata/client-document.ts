/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): which `client_id`
 * URLs name one, and what a fetched document must hold to be used as a client.
 *
 * @module
 */
import { ClientJwksSchema, RedirectUriSchema } from '@tessera/config-schema'
import type { Client, ClientJwk, GrantType } from '@tessera/config-schema'
import * as z from 'zod'
import { isLoopbackAddress } from './address-rules.js'

/** The longest `client_id` URL looked at. */
const MAX_URL_LENGTH = 2048

// A path segment that is `.` or `..`, also percent-encoded (`%2e`, `.%2E`, ...).
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i

/**
 * Whether a `client_id` names a metadata document: an https URL with a path other than `/`, no
 * fragment, no user name or password, no `.` or `..` segment. With `allowPrivateAddresses`,
 * http to a loopback host too (for development). Anything else is not a metadata document URL:
 * it names no client at all.
 */
export function isClientIdUrl(clientId: string, allowPrivateAddresses: boolean): boolean {
  if (clientId.length > MAX_URL_LENGTH || /[\s#]/.test(clientId)) return false
  const scheme = /^(https?):\/\//.exec(clientId)?.[1]
  if (scheme === undefined || !URL.canParse(clientId)) return false
  const url = new URL(clientId)
  if (scheme === 'http') {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const loopback = isLoopbackAddress(host) || host === 'localhost' || host.endsWith('.localhost')
    if (!allowPrivateAddresses || !loopback) return false
  }
  if (url.username !== '' || url.password !== '') return false
  if (url.pathname === '/' || url.pathname === '') return false
  // The written path, before the parser resolved any dot segment away.
  const rawPath = clientId.slice(clientId.indexOf('/', scheme.length + 3)).split('?')[0]!
  return !rawPath.split('/').some((segment) => DOT_SEGMENT.test(segment))
}

/** The host shown for a metadata-document client: with its port when not the default one. */
export function clientIdHost(clientId: string): string {
  return new URL(clientId).host
}

const DOCUMENT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const

const issue = (ctx: z.RefinementCtx, path: string, message: string): void => {
  ctx.addIssue({ code: 'custom', path: [path], message })
}

/**
 * What a metadata document must hold; members this server does not use are ignored (RFC 7591
 * §2). `scope` is the space-separated list of RFC 7591.
 */
const ClientDocumentSchema = z
  .looseObject({
    client_id: z.string({ error: 'must be a string' }),
    client_name: z.string({ error: 'must be a string' }).min(1).max(100).optional(),
    redirect_uris: z
      .array(RedirectUriSchema, { error: 'is required: a list of redirect URIs' })
      .min(1, 'must list at least one redirect URI')
      .max(20, 'must list at most 20 redirect URIs'),
    post_logout_redirect_uris: z.array(RedirectUriSchema).max(20).optional(),
    grant_types: z
      .array(
        z.enum(DOCUMENT_GRANT_TYPES, {
          error: `must be ${DOCUMENT_GRANT_TYPES.join(' or ')}`,
        }),
      )
      .min(1)
      .optional(),
    response_types: z.array(z.literal('code', { error: 'must be code' })).optional(),
    token_endpoint_auth_method: z
      .enum(['none', 'private_key_jwt'], {
        error:
          'must be none or private_key_jwt: a metadata document is public, it cannot carry a shared secret',
      })
      .optional(),
    jwks: ClientJwksSchema.optional(),
    jwks_uri: z.url({ protocol: /^https?$/, error: 'must be an absolute https URL' }).optional(),
    scope: z.string({ error: 'must be a string of space-separated scopes' }).max(2000).optional(),
  })
  .superRefine((document, ctx) => {
    // Anyone can read the document: a secret in it is no secret.
    for (const field of ['client_secret', 'client_secret_expires_at']) {
      if (field in document) issue(ctx, field, 'must not be present in a metadata document')
    }
    if (document.token_endpoint_auth_method === 'private_key_jwt') {
      if (document.jwks === undefined && document.jwks_uri === undefined) {
        issue(ctx, 'token_endpoint_auth_method', 'private_key_jwt needs jwks or jwks_uri')
      }
      if (document.jwks !== undefined && document.jwks_uri !== undefined) {
        issue(ctx, 'jwks_uri', 'give jwks or jwks_uri, not both')
      }
    } else {
      for (const field of ['jwks', 'jwks_uri'] as const) {
        if (document[field] !== undefined) {
          issue(ctx, field, 'is used only with token_endpoint_auth_method private_key_jwt')
        }
      }
    }
  })

/** A metadata document, checked; what every tenant makes its client of. */
export interface ClientDocument {
  clientId: string
  name?: string
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  grantTypes: GrantType[]
  /** The scopes the document asks for; undefined when it names none. */
  scopes?: string[]
  tokenEndpointAuthMethod: 'none' | 'private_key_jwt'
  jwks?: { keys: ClientJwk[] }
  jwksUri?: string
}

/** Why a fetched document cannot be used: the reason given to the client and the user. */
export class UnusableDocumentError extends Error {
  override readonly name = 'UnusableDocumentError'
}

/**
 * Checks the body of a document fetched from `url`: JSON, an object, `client_id` equal to `url`
 * (exactly: no normalisation), then the members above. Throws {@link UnusableDocumentError}
 * naming the first problem.
 */
export function parseClientDocument(url: string, body: Buffer): ClientDocument {
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    throw new UnusableDocumentError('it is not JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UnusableDocumentError('it is not a JSON object')
  }
  const clientId = (json as Record<string, unknown>).client_id
  if (clientId !== url) {
    throw new UnusableDocumentError(
      typeof clientId === 'string'
        ? 'its client_id differs from the URL it was fetched from'
        : 'it has no client_id',
    )
  }
  const parsed = ClientDocumentSchema.safeParse(json)
  if (!parsed.success) {
    const first = parsed.error.issues[0]!
    const path = first.path.map(String).join('.')
    throw new UnusableDocumentError(path === '' ? first.message : `${path}: ${first.message}`)
  }
  const document = parsed.data
  if (new Set(document.redirect_uris).size !== document.redirect_uris.length) {
    throw new UnusableDocumentError('redirect_uris: lists a URI twice')
  }
  const scopes = document.scope?.split(' ').filter((scope) => scope !== '')
  return {
    clientId: url,
    ...(document.client_name === undefined ? {} : { name: document.client_name }),
    redirectUris: document.redirect_uris,
    postLogoutRedirectUris: document.post_logout_redirect_uris ?? [],
    // RFC 7591 §2: without grant_types, the client uses the authorization code alone.
    grantTypes: [...new Set<GrantType>(document.grant_types ?? ['authorization_code'])],
    ...(scopes === undefined ? {} : { scopes }),
    tokenEndpointAuthMethod: document.token_endpoint_auth_method ?? 'none',
    ...(document.jwks === undefined ? {} : { jwks: document.jwks }),
    ...(document.jwks_uri === undefined ? {} : { jwksUri: document.jwks_uri }),
  }
}

/**
 * The client a tenant sees in a document: its scopes are those the document asks for (all the
 * tenant's dynamic-client scopes when it names none) among the tenant's dynamic-client scopes.
 */
export function documentClient(document: ClientDocument, tenantScopes: readonly string[]): Client {
  const scopes =
    document.scopes === undefined
      ? [...tenantScopes]
      : tenantScopes.filter((scope) => document.scopes!.includes(scope))
  return {
    clientId: document.clientId,
    ...(document.name === undefined ? {} : { name: document.name }),
    grantTypes: [...document.grantTypes],
    redirectUris: [...document.redirectUris],
    postLogoutRedirectUris: [...document.postLogoutRedirectUris],
    scopes,
    introspection: 'own',
    tokenEndpointAuthMethod: document.tokenEndpointAuthMethod,
    ...(document.jwks === undefined ? {} : { jwks: document.jwks }),
    ...(document.jwksUri === undefined ? {} : { jwksUri: document.jwksUri }),
    dynamic: { kind: 'metadata-document', host: clientIdHost(document.clientId) },
  }
}
