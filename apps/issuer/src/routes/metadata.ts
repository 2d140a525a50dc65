import type { Middleware } from 'koa'
import type { TenantState } from '../http/tenant.js'
import type { TenantRuntime } from '../tenants.js'

/**
 * The RFC 8414 document of one tenant. Only what is implemented is advertised: the
 * authorization endpoint and the code and refresh grants arrive with issue #3.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-2
 */
export function authorizationServerMetadata(runtime: TenantRuntime): Record<string, unknown> {
  const { issuer } = runtime
  const scopes = new Set(runtime.tenant.clients.flatMap((client) => client.scopes))
  return {
    issuer,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    grant_types_supported: ['password'],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
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
