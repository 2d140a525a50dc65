import { CLIENT_ASSERTION_ALGORITHMS } from '@tessera/config-schema'
import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'
import type { TenantRuntime } from '../tenants.js'

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
  const scopes = new Set(runtime.tenant.clients.flatMap((client) => client.scopes))
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
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
  }
}

/** GET /.well-known/oauth-authorization-server */
export function metadataRoute(): Middleware<TenantState> {
  return (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.body = authorizationServerMetadata(ctx.state.tenant)
  }
}
