/**
 * zod schemas for the wire forms of a tenant. Field names are snake_case, as in the RFCs
 * (`client_id`, `grant_types`, `jwt_algorithm`); objects are strict, so a misspelt key is an
 * error instead of a silently ignored setting.
 *
 * The schemas check shapes and values only. What needs context (provider paths relative to the
 * file, `{env: VAR}` secrets, names and hosts unique across documents) is checked by
 * `parseConfig`, which also maps the result onto the `Tenant` model.
 *
 * @module
 */
import * as z from 'zod'
import {
  ClientIdSchema,
  HostSchema,
  MIN_SECRET_LENGTH,
  SCOPE_TOKEN,
  TenantNameSchema,
} from './internal/fields.js'
import {
  checkClientAuthentication,
  ClientJwksSchema,
  JwksUriSchema,
  TokenEndpointAuthMethodSchema,
} from './internal/client-keys.js'
import { DpopBoundAccessTokensSchema, DpopNonceSchema } from './internal/dpop.js'
import { OriginSchema } from './internal/origin.js'
import { ScopeListSchema, secretSchema, strictObject, uniqueList } from './internal/schema-parts.js'
import { DynamicClientsSchema } from './dynamic-clients.js'
import { normaliseResourceUri } from './resource-uri.js'
import { GRANT_TYPES, INTROSPECTION_SCOPES, JWT_ALGORITHMS } from './model.js'
import type { GrantType } from './model.js'

// RFC 3986 §3.1 scheme; a private-use one must hold a dot: a reversed domain name the app's
// owner controls (RFC 8252 §7.1). That rule alone also keeps out javascript:, data:, file:,
// vbscript:, blob: and every other scheme a browser would run or read locally.
const SCHEME = /^([a-z][a-z0-9+.-]*):/i

/** A redirect URI as a client may register it: absolute, no fragment, http(s) or a private-use scheme with a dot. */
export const RedirectUriSchema = z.string().superRefine((uri, ctx) => {
  // RFC 6749 §3.1.2: an absolute URI without a fragment, compared by exact match later on.
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase()
  if (/\s/.test(uri) || !URL.canParse(uri) || scheme === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' })
  } else if (uri.includes('#')) {
    ctx.addIssue({ code: 'custom', message: 'must not contain a fragment (#)' })
  } else if (scheme === 'http' || scheme === 'https') {
    // `http:cb` and `http:/cb` parse too (as http://cb/): only the written form is compared, so
    // it must be the one a browser ends up at.
    if (!uri.slice(scheme.length).startsWith('://')) {
      ctx.addIssue({ code: 'custom', message: `must start with ${scheme}://` })
    }
  } else if (!scheme.includes('.')) {
    ctx.addIssue({
      code: 'custom',
      message: `scheme "${scheme}:" is not allowed; use https, http or a private-use scheme named for a domain (RFC 8252 §7.1), e.g. com.example.app:/callback`,
    })
  }
})

// The fields the client-authentication rules read: they run only once each of these is valid.
const AUTH_FIELDS = new Set(['client_secret', 'token_endpoint_auth_method', 'jwks', 'jwks_uri'])

const DEFAULT_GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token']

/**
 * One OAuth client of a tenant, in wire form (`client_id`, `grant_types`, ...).
 *
 * Defaults: `grant_types` [authorization_code, refresh_token], `redirect_uris` [],
 * `post_logout_redirect_uris` [], `scopes` [], `introspection` own, no `allowed_origins`.
 * `redirect_uris` must be non-empty when `grant_types` includes authorization_code;
 * `post_logout_redirect_uris` needs `openid` in `scopes`; `introspection: tenant` and
 * `client_credentials` need a `client_secret` or private_key_jwt; private_key_jwt needs `jwks` or
 * `jwks_uri` and no `client_secret`.
 *
 * @see RFC 6749 §2 (clients), §3.1.2 (redirection endpoint), §3.3 (scope), §4.4 (client
 *   credentials)
 * @see RFC 7662 §2.1 (who may introspect)
 * @see docs/cors.md (allowed_origins)
 * @see RFC 7523 §2.2, RFC 7591 §2 (private_key_jwt, jwks, jwks_uri)
 * @see OpenID Connect RP-Initiated Logout 1.0 §3.1 (post_logout_redirect_uris)
 */
export const ClientSchema = strictObject({
  client_id: ClientIdSchema.describe('UUID of the client (any version)'),
  client_name: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Shown to users on the login page (RFC 7591 client_name); default: the client_id'),
  client_secret: secretSchema(z.string().min(1))
    .optional()
    .describe('Present for a confidential client: the secret, or {env: VARIABLE_NAME}'),
  grant_types: uniqueList(
    z.enum(GRANT_TYPES, {
      error: (issue) =>
        typeof issue.input === 'string'
          ? `unknown grant type "${issue.input}"; expected one of ${GRANT_TYPES.join(', ')}`
          : `must be one of ${GRANT_TYPES.join(', ')}`,
    }),
    'grant type',
  )
    .min(1)
    .default(() => [...DEFAULT_GRANT_TYPES])
    .describe('Grants the client may use'),
  redirect_uris: uniqueList(RedirectUriSchema, 'redirect URI')
    .default(() => [])
    .describe(
      'Absolute URLs without fragment (https, http or a private-use scheme such as com.example.app:/cb), matched exactly except for the port of http://127.0.0.1 and http://[::1]; needed for authorization_code',
    ),
  post_logout_redirect_uris: uniqueList(RedirectUriSchema, 'post-logout redirect URI')
    .default(() => [])
    .describe(
      'Where /logout may send the browser once signed out (OpenID Connect RP-Initiated Logout): absolute URLs without fragment (https, http or a private-use scheme), as redirect_uris, matched exactly; needs openid in scopes',
    ),
  scopes: uniqueList(
    z.string().regex(SCOPE_TOKEN, 'must be a scope token: printable ASCII without spaces, " or \\'),
    'scope',
  )
    .default(() => [])
    .describe('The scopes the client may obtain'),
  introspection: z
    .enum(INTROSPECTION_SCOPES, {
      error: `must be one of ${INTROSPECTION_SCOPES.join(', ')}`,
    })
    .default('own')
    .describe(
      'Tokens the client may introspect: own (issued to it) or tenant (all, for a resource server)',
    ),
  allowed_origins: uniqueList(OriginSchema, 'origin')
    .optional()
    .describe(
      'Web origins (http(s)://host[:port]) whose pages may call /token, /revoke and /.well-known/* (CORS), beyond the origins of redirect_uris',
    ),
  token_endpoint_auth_method: TokenEndpointAuthMethodSchema.optional().describe(
    'The only way the client may authenticate; default: client_secret_basic or client_secret_post with a client_secret, none without',
  ),
  jwks: ClientJwksSchema.optional().describe(
    'Public keys (a JWK Set) that verify the client assertions of a private_key_jwt client',
  ),
  jwks_uri: JwksUriSchema.optional().describe(
    'URL of the JWK Set of a private_key_jwt client (https; http for loopback hosts only)',
  ),
  dpop_bound_access_tokens: DpopBoundAccessTokensSchema,
})
  .superRefine(
    (client, ctx) => {
      if (client.grant_types.includes('authorization_code') && client.redirect_uris.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: 'must list at least one URL when grant_types includes authorization_code',
          path: ['redirect_uris'],
        })
      }
    },
    {
      // Also when other fields of the client are wrong, so long as it is an object and both lists
      // are valid: every problem is reported in one go.
      when: (payload) =>
        payload.issues.every((issue) =>
          issue.path === undefined || issue.path.length === 0
            ? issue.code === 'unrecognized_keys'
            : issue.path[0] !== 'grant_types' && issue.path[0] !== 'redirect_uris',
        ),
    },
  )
  .superRefine(
    (client, ctx) => {
      // Only an OpenID request starts a session that /logout can end: URIs listed for a client
      // without openid point at a forgotten scope rather than at an intent.
      if (client.post_logout_redirect_uris.length > 0 && !client.scopes.includes('openid')) {
        ctx.addIssue({
          code: 'custom',
          message: 'post_logout_redirect_uris needs openid in scopes',
          path: ['post_logout_redirect_uris'],
        })
      }
    },
    {
      when: (payload) =>
        payload.issues.every(
          (issue) =>
            issue.path === undefined ||
            issue.path.length === 0 ||
            (issue.path[0] !== 'post_logout_redirect_uris' && issue.path[0] !== 'scopes'),
        ),
    },
  )
  .superRefine(checkClientAuthentication, {
    when: (payload) =>
      payload.issues.every(
        (issue) =>
          issue.path === undefined ||
          issue.path.length === 0 ||
          !AUTH_FIELDS.has(String(issue.path[0])),
      ),
  })
  .superRefine(
    (client, ctx) => {
      // RFC 6749 §4.4: the grant is for confidential clients only; without a credential the
      // token would go to anyone who knows the (public) client_id.
      const confidential =
        client.client_secret !== undefined ||
        client.token_endpoint_auth_method === 'private_key_jwt'
      if (client.grant_types.includes('client_credentials') && !confidential) {
        ctx.addIssue({
          code: 'custom',
          message:
            'client_credentials needs a client_secret or private_key_jwt: a public client cannot authenticate for it',
          path: ['grant_types'],
        })
      }
    },
    {
      when: (payload) =>
        payload.issues.every(
          (issue) =>
            issue.path === undefined ||
            issue.path.length === 0 ||
            (issue.path[0] !== 'grant_types' && !AUTH_FIELDS.has(String(issue.path[0]))),
        ),
    },
  )
  .superRefine(
    (client, ctx) => {
      // RFC 7662 §2.1: the introspection endpoint needs client authentication, which a public
      // client cannot give; a resource server that introspects must hold a secret or a key.
      const confidential =
        client.client_secret !== undefined ||
        client.token_endpoint_auth_method === 'private_key_jwt'
      if (client.introspection === 'tenant' && !confidential) {
        ctx.addIssue({
          code: 'custom',
          message:
            'tenant needs a client_secret or private_key_jwt: a public client cannot introspect',
          path: ['introspection'],
        })
      }
    },
    {
      when: (payload) =>
        payload.issues.every(
          (issue) =>
            issue.path === undefined ||
            issue.path.length === 0 ||
            (issue.path[0] !== 'introspection' && !AUTH_FIELDS.has(String(issue.path[0]))),
        ),
    },
  )

/** One resource server of the tenant (RFC 8707): the URI clients send as `resource`. */
const ResourceSchema = strictObject({
  uri: z
    .string()
    .superRefine((uri, ctx) => {
      if (/\s/.test(uri) || !URL.canParse(uri)) {
        ctx.addIssue({ code: 'custom', message: 'must be an absolute URI' })
      } else if (uri.includes('#')) {
        ctx.addIssue({ code: 'custom', message: 'must not contain a fragment (#)' })
      }
    })
    .describe("Absolute URI without fragment: what clients send as resource, and the tokens' aud"),
  scopes: ScopeListSchema.optional().describe(
    'The scopes a token for this resource may carry; default: any',
  ),
})

/** The resources of a tenant; two URIs equal once normalised are one resource named twice. */
const ResourceListSchema = z.array(ResourceSchema).superRefine(
  (resources, ctx) => {
    const failed = new Set(ctx.issues.map((issue) => issue.path?.[0]))
    const seen = new Map<string, string>()
    resources.forEach((resource, index) => {
      if (failed.has(index) || typeof resource?.uri !== 'string') return
      const key = normaliseResourceUri(resource.uri)
      if (key === undefined) return
      const earlier = seen.get(key)
      if (earlier !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `duplicate resource "${resource.uri}" (the same as "${earlier}")`,
          path: [index, 'uri'],
        })
      } else seen.set(key, resource.uri)
    })
  },
  { when: (payload) => Array.isArray(payload.value) },
)

/** The tenant settings: `config` in the file form, `spec` in the resource form. */
const TenantConfigSchema = strictObject({
  hosts: uniqueList(HostSchema, 'host')
    .min(1)
    .describe('Host names matched against the Host header, case-insensitively, port ignored'),
  jwt_algorithm: z
    .enum(JWT_ALGORITHMS, { error: `must be one of ${JWT_ALGORITHMS.join(', ')}` })
    .default('HS256')
    .describe('Access-token signing algorithm'),
  providers: z
    .array(z.string().min(1))
    .min(1)
    .describe('User-authentication scripts, paths relative to the configuration file'),
  audience: z
    .string()
    .min(1)
    .optional()
    .describe("Access-token audience; default: the tenant's issuer URL"),
  jwt_secret: secretSchema(
    z.string().min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`),
  )
    .optional()
    .describe('HS256 secret of this tenant alone (default: JWT_SECRET); better {env: VARIABLE}'),
  clients: z.array(ClientSchema).describe('The OAuth clients of the tenant'),
  resources: ResourceListSchema.optional().describe(
    'The resource servers of the tenant (RFC 8707 resource indicators); default: none',
  ),
  dynamic_clients: DynamicClientsSchema.optional().describe(
    'Clients the file does not list: registration (RFC 7591) and client ID metadata documents',
  ),
  dpop_nonce: DpopNonceSchema,
})

/**
 * A tenant in file form: `{ name, config: { hosts, jwt_algorithm, providers, ... } }`.
 */
export const TenantFileSchema = strictObject({
  name: TenantNameSchema,
  config: TenantConfigSchema,
})

/**
 * A tenant in Kubernetes resource form: `apiVersion: tessera.dev/v1`, `kind: Tenant`,
 * `metadata.name`, and the `config` keys of the file form under `spec`. `metadata` may carry any
 * other Kubernetes fields (namespace, labels, uid, ...), and a `status` is allowed and ignored.
 *
 * @see docs/kubernetes-source.md
 */
export const TenantResourceSchema = strictObject({
  apiVersion: z.literal('tessera.dev/v1'),
  kind: z.literal('Tenant'),
  metadata: z.looseObject({ name: TenantNameSchema }),
  spec: TenantConfigSchema.describe('The tenant configuration'),
  status: z.unknown().optional(),
})

/** A tenant as written in file form (the schema's input type). */
export type TenantFile = z.input<typeof TenantFileSchema>
/** A tenant as written in resource form (the schema's input type). */
export type TenantResource = z.input<typeof TenantResourceSchema>
