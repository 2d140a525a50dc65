import { CLIENT_ASSERTION_ALGORITHMS } from '@tessera/config-schema'
import { EMAIL_CLAIMS, ID_TOKEN_CLAIMS, PROFILE_CLAIMS, PROMPT_VALUES } from '@tessera/grants'
import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'
import type { TenantRuntime } from '../tenants/runtime.js'

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']
// The algorithms of private_key_jwt client assertions (RFC 7523).
const ASSERTION_ALGS = [...CLIENT_ASSERTION_ALGORITHMS]

/**
 * The RFC 8414 document of one tenant.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-2
 */
export function authorizationServerMetadata(runtime: TenantRuntime): Record<string, unknown> {
  const { issuer } = runtime
  // What any client may get: the listed clients' scopes and those of dynamic clients.
  const scopes = new Set([
    ...runtime.tenant.clients.flatMap((client) => client.scopes),
    ...(runtime.tenant.dynamicClients?.scopes ?? []),
  ])
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    userinfo_endpoint: `${issuer}/userinfo`,
    end_session_endpoint: `${issuer}/logout`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'password',
      'client_credentials',
    ],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    // Introspection answers confidential clients only (RFC 7662 §2.1).
    introspection_endpoint_auth_methods_supported: [
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
    ],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    scopes_supported: [...scopes].sort(),
    authorization_response_iss_parameter_supported: true,
    ...(runtime.tenant.dynamicClients?.registration === true
      ? { registration_endpoint: `${issuer}/register` }
      : {}),
    // draft-ietf-oauth-client-id-metadata-document: https client_id URLs are accepted.
    ...(runtime.tenant.dynamicClients?.metadataDocuments === true
      ? { client_id_metadata_document_supported: true }
      : {}),
  }
}

/**
 * The OpenID Provider metadata of one tenant: the RFC 8414 document plus what OpenID Connect
 * Discovery 1.0 §3 adds. `openid` is always listed (§3: the server must support it).
 *
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderMetadata
 */
export function openIdConfiguration(runtime: TenantRuntime): Record<string, unknown> {
  const metadata = authorizationServerMetadata(runtime)
  const scopes = new Set(metadata.scopes_supported as string[]).add('openid')
  return {
    ...metadata,
    scopes_supported: [...scopes].sort(),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    claims_supported: [...ID_TOKEN_CLAIMS, ...PROFILE_CLAIMS, ...EMAIL_CLAIMS],
    prompt_values_supported: [...PROMPT_VALUES],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  }
}

/** GET /.well-known/oauth-authorization-server */
export function metadataRoute(): Middleware<TenantState> {
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.body = authorizationServerMetadata(ctx.state.tenant)
  }
}

/** GET /.well-known/openid-configuration */
export function openIdConfigurationRoute(): Middleware<TenantState> {
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.body = openIdConfiguration(ctx.state.tenant)
  }
}
