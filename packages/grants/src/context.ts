import type { Client } from '@tessera/config-schema'
import type { TokenSigner } from '@tessera/keys'
import type { Clock, ThrottleStore, UserAuthenticator } from './ports.js'

/** Everything a grant needs to know about the tenant that a request is for. */
export interface TenantContext {
  name: string
  /** The tenant's issuer URL (`iss`). */
  issuer: string
  /** `aud` of the access tokens. */
  audience: string
  clients: ReadonlyMap<string, Client>
  signer: TokenSigner
  users: UserAuthenticator
  accessTokenTtlSeconds: number
}

/** Limits for failed password checks (DESIGN §4). */
export interface ThrottlePolicy {
  maxFailuresPerUser: number
  maxFailuresPerAddress: number
  windowMs: number
}

/** Ports and policies shared by every tenant. */
export interface GrantDeps {
  throttle: ThrottleStore
  throttlePolicy: ThrottlePolicy
  clock: Clock
  /** Random identifier for `jti`. */
  randomId: () => string
}

/** RFC 6749 §5.1 token response. */
export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in: number
  scope: string
  refresh_token?: string
}
