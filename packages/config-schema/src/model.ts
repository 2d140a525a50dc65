/**
 * The normalised Tenant model: what both YAML forms (file form and `kind: Tenant` resource form)
 * become after parsing. Everything downstream (keys, grants, the issuer) sees only this.
 *
 * @module
 */

/**
 * Grant types a client may list. `password` and `client_credentials` only when listed;
 * `client_credentials` only for a client that can authenticate (RFC 6749 §4.4).
 */
export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'password',
  'client_credentials',
] as const
/** One of {@link GRANT_TYPES}. */
export type GrantType = (typeof GRANT_TYPES)[number]

/** Access-token signing algorithms a tenant may choose; HS256 is the default. */
export const JWT_ALGORITHMS = ['HS256', 'RS256'] as const
/** One of {@link JWT_ALGORITHMS}. */
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number]

/**
 * What a client may introspect (RFC 7662 §2.1 leaves it to the server): `own`, the tokens issued
 * to it; `tenant`, every token of its tenant (a resource server).
 */
export const INTROSPECTION_SCOPES = ['own', 'tenant'] as const
/** One of {@link INTROSPECTION_SCOPES}. */
export type IntrospectionScope = (typeof INTROSPECTION_SCOPES)[number]

/**
 * How a client authenticates at /token, /revoke and /introspect (RFC 7591 §2
 * `token_endpoint_auth_method`).
 */
export const TOKEN_ENDPOINT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
] as const
/** One of {@link TOKEN_ENDPOINT_AUTH_METHODS}. */
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number]

/** Algorithms a `private_key_jwt` client may sign its assertions with (RFC 7523). */
export const CLIENT_ASSERTION_ALGORITHMS = ['RS256', 'ES256', 'PS256'] as const
/** One of {@link CLIENT_ASSERTION_ALGORITHMS}. */
export type ClientAssertionAlgorithm = (typeof CLIENT_ASSERTION_ALGORITHMS)[number]

/** One public key of a client (RFC 7517): RSA or EC P-256, never a private member. */
export interface ClientJwk {
  kty: 'RSA' | 'EC'
  kid?: string
  use?: 'sig'
  alg?: ClientAssertionAlgorithm
  key_ops?: 'verify'[]
  n?: string
  e?: string
  crv?: 'P-256'
  x?: string
  y?: string
  x5c?: string[]
  x5t?: string
  'x5t#S256'?: string
}

/** Where a tenant came from, for error messages and logs. */
export interface SourceLocation {
  file: string
  /** 1-based line of the start of the YAML document that defined the tenant. */
  line: number
}

/** One OAuth client of a tenant. Secrets given as `{env: VAR}` are already resolved here. */
export interface Client {
  clientId: string
  /** Shown to users on the login page; absent means the client_id is shown. */
  name?: string
  /** Present for confidential clients; absent for public clients. */
  clientSecret?: string
  grantTypes: GrantType[]
  redirectUris: string[]
  /**
   * Where /logout may send the browser after signing out (`post_logout_redirect_uris`), compared
   * as exact strings; `[]` when none are listed.
   */
  postLogoutRedirectUris: string[]
  scopes: string[]
  /** Whose tokens it may introspect; public clients introspect none, whatever this says. */
  introspection: IntrospectionScope
  /**
   * Serialized origins (`https://app.example.com`) allowed CORS beyond those of the redirect
   * URIs; absent when none are listed.
   */
  allowedOrigins?: string[]
  /**
   * The one method the client must use, when configured; absent: HTTP Basic or the body for a
   * client with a secret, none without.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  /** The public keys of a `private_key_jwt` client, inline (`jwks`)... */
  jwks?: { keys: ClientJwk[] }
  /** ...or the URL they are fetched from (`jwks_uri`). */
  jwksUri?: string
  /** `dpop_bound_access_tokens: true`: a token request without a DPoP proof is refused. */
  dpopBoundAccessTokens?: boolean
  /**
   * A registered client's secret as its SHA-256 (lower-case hex), instead of `clientSecret`:
   * the store never holds a registered secret in clear.
   */
  clientSecretHash?: string
  /** Set for a client the tenant file does not list; such a client needs the user's consent. */
  dynamic?: DynamicClientOrigin
}

/** How a client the tenant file does not list came to be known. */
export type DynamicClientOrigin =
  /** Registered at /register (RFC 7591). */
  | { kind: 'registered' }
  /**
   * Named by its https `client_id` URL (a client ID metadata document); `host` is that URL's
   * host, with its port when not the default, shown to the user on the consent page.
   */
  | { kind: 'metadata-document'; host: string }

/** A tenant's `dynamic_clients` section, normalised. */
export interface DynamicClientsConfig {
  /** POST /register and RFC 7592 management. */
  registration: boolean
  /** The initial access token /register requires, resolved; absent: open registration. */
  registrationToken?: string
  /** https `client_id` URLs are fetched as client ID metadata documents. */
  metadataDocuments: boolean
  /** The scopes dynamic clients may get. */
  scopes: string[]
  /** Live registrations per tenant. */
  maxRegistrations: number
}

/** One tenant, normalised. */
export interface Tenant {
  name: string
  /** Lower-cased host names, each possibly with a port; matching ignores the port. */
  hosts: string[]
  jwtAlgorithm: JwtAlgorithm
  /** Absolute paths of the provider scripts, in the order they are tried. */
  providers: string[]
  /** The configured audience, if any; the issuer defaults it to the issuer URL. */
  audience?: string
  /** The tenant's own HS256 secret, if it names one; otherwise JWT_SECRET applies. */
  jwtSecret?: string
  clients: Client[]
  /**
   * The resource servers clients may name with `resource` (RFC 8707); absent when none are listed.
   */
  resources?: Resource[]
  /** Clients the file does not list; absent when the tenant allows none. */
  dynamicClients?: DynamicClientsConfig
  /** `dpop_nonce: true`: DPoP proofs must carry the issuer's current nonce (RFC 9449 §8). */
  dpopNonce?: boolean
  source: SourceLocation
}

/** One resource server of a tenant (RFC 8707). */
export interface Resource {
  /** As configured: the tokens for it carry this as their `aud`. */
  uri: string
  /** The scopes a token for it may carry; absent: any. */
  scopes?: string[]
}

/** One configuration problem, printed as `file:line: path: message`. */
export interface ConfigIssue {
  file: string
  /** 1-based line number; 0 when there is no line (settings read from the environment). */
  line: number
  /** Dotted field path, e.g. `config.clients.0.client_id`; empty for document-level problems. */
  path: string
  message: string
}

/** Thrown by the loaders when a configuration has problems; carries every issue at once. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly issues: ConfigIssue[]
  constructor(issues: ConfigIssue[]) {
    super(issues.map(formatConfigIssue).join('\n'))
    this.issues = issues
  }
}

/**
 * Formats an issue as `file:line: path: message`, the one line a user sees per problem.
 *
 * The path part is left out when empty, and the `:line` part when the line is 0 (settings read
 * from the environment: `environment: JWT_SECRET: must be at least 32 characters`).
 */
export function formatConfigIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}` : issue.file
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`
}
