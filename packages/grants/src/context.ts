import type { Client, Resource } from '@tessera/config-schema'
import type { JWTPayload, TokenSigner } from '@tessera/keys'
import type { ConsentStore, DynamicClientSource } from './dynamic-ports.js'
import type {
  AuthorizationCodeStore,
  ClientKeys,
  Clock,
  FailureCounter,
  MarkStore,
  RefreshTokenStore,
  SecretStore,
  SessionStore,
  ThrottleStore,
  UserAuthenticator,
} from './ports.js'

/** Everything a grant needs to know about the tenant that a request is for. */
export interface TenantContext {
  name: string
  /** The tenant's issuer URL (`iss`, and `iss` of authorization responses, RFC 9207). */
  issuer: string
  /** `aud` of the access tokens. */
  audience: string
  /** The clients the tenant file lists, by lower-cased client_id. */
  clients: ReadonlyMap<string, Client>
  /** Clients the tenant file does not list; absent when the tenant allows none. */
  dynamicClients?: DynamicClientSource
  /** The resource servers clients may name with `resource` (RFC 8707); absent: none. */
  resources?: readonly Resource[]
  signer: TokenSigner
  /**
   * The RS256 signer of ID tokens, from the tenant's key ring: at an RS256 tenant the same as
   * `signer`, at an HS256 tenant a key kept for ID tokens alone. Set when any client of the
   * tenant lists `openid` (and at every RS256 tenant); undefined at an HS256 tenant without
   * OpenID Connect clients.
   */
  idTokenSigner?: TokenSigner
  /**
   * Verifies an `id_token_hint` (RP-Initiated Logout): an RS256 signature by a key the tenant
   * publishes and its `iss`, but not its `exp` (a hint may have expired); undefined otherwise.
   */
  verifyIdTokenHint?: (token: string) => Promise<JWTPayload | undefined>
  /**
   * Verifies an access token of this tenant (signature by any key it still publishes or its
   * HS256 secret, `iss`, `exp`); undefined when it does not verify. Used by introspection.
   */
  verifyAccessToken: (token: string) => Promise<JWTPayload | undefined>
  users: UserAuthenticator
  accessTokenTtlSeconds: number
  /** `dpop_nonce: true`: DPoP proofs must carry the tenant's current server nonce. */
  dpopNonce?: boolean
}

/**
 * Limits for failed password checks.
 *
 * @see docs/throttling.md
 */
export interface ThrottlePolicy {
  maxFailuresPerUser: number
  maxFailuresPerAddress: number
  windowMs: number
  /**
   * PROVIDER_TIMEOUT_MS: how long an attempt waits for the attempts in flight ahead of it to
   * settle before it is answered 503.
   */
  waitMs: number
  /** How long a hold counts as in flight if it is never settled (its process stopped). */
  leaseMs: number
}

/**
 * Limits for failed client authentications at /token, /revoke and /introspect.
 *
 * @see docs/throttling.md
 */
export interface ClientAuthPolicy {
  /** CLIENT_AUTH_MAX_FAILURES: per tenant, client_id and address. */
  maxFailures: number
  /** CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: per address, across clients and tenants. */
  maxFailuresPerAddress: number
  /** The password window (PASSWORD_FAILURE_WINDOW_SECONDS), in milliseconds. */
  windowMs: number
}

/** Ports and policies shared by every tenant. */
export interface GrantDeps {
  throttle: ThrottleStore
  throttlePolicy: ThrottlePolicy
  /** Failed client authentications, counted per client_id+address and per address. */
  clientAuthFailures: FailureCounter
  clientAuthPolicy: ClientAuthPolicy
  codes: AuthorizationCodeStore
  refreshTokens: RefreshTokenStore
  /** Expiring single-use and revocation marks. */
  marks: MarkStore
  /** Server-wide secrets, the same for every replica. */
  secrets: SecretStore
  /** Users' remembered consents to clients the tenant file does not list. */
  consents: ConsentStore
  /** OpenID Connect single sign-on sessions. */
  sessions: SessionStore
  /** SESSION_TTL_HOURS, in seconds: the absolute life of a sign-in session. */
  sessionTtlSeconds: number
  /** The public keys of private_key_jwt clients. */
  clientKeys: ClientKeys
  /** AUTHORIZATION_CODE_TTL_SECONDS */
  codeTtlSeconds: number
  /** REFRESH_TOKEN_EXPIRATION_IN_HOURS, in seconds: the absolute life of a family. */
  refreshTokenTtlSeconds: number
  /** How long a login form stays usable, in seconds. */
  loginTtlSeconds: number
  /** DPOP_PROOF_MAX_AGE_SECONDS; 60 when absent. */
  dpopProofMaxAgeSeconds?: number
  clock: Clock
  /** Random identifier for `jti` and family ids; never contains a dot (UUIDs do not). */
  randomId: () => string
}

/** RFC 6749 §5.1 token response. */
export interface TokenResponse {
  access_token: string
  /** `DPoP` when the access token is bound to a DPoP key (RFC 9449 §5). */
  token_type: 'bearer' | 'DPoP'
  expires_in: number
  scope: string
  refresh_token?: string
  /** OpenID Connect: for code and refresh grants of a sign-in with `openid`. */
  id_token?: string
}
