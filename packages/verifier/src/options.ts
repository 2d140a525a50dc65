import type { DpopReplayCache } from './dpop-replay-cache.js'
import type { VerifierErrorCode } from './errors.js'

/** The signing algorithms a Tessera issuer uses; nothing else is ever accepted. */
export type Algorithm = 'HS256' | 'RS256'

/**
 * A `fetch`-compatible function. `globalThis.fetch` fits; a custom one can route through a proxy
 * or, in tests, to a local server.
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

/** Options of {@link createVerifier}. Durations are in milliseconds unless stated otherwise. */
export interface VerifierOptions {
  /**
   * The accepted issuer URL, or several. A token whose `iss` is not one of them is refused
   * before anything is fetched; each issuer has its own key cache.
   */
  issuer: string | readonly string[]
  /** When set, the token's `aud` must contain one of these values. Default: `aud` not checked. */
  audience?: string | readonly string[] | undefined
  /**
   * The HS256 shared secret (the issuer's `JWT_SECRET`), at least 32 characters. Enables HS256
   * unless `algorithms` leaves it out. HS256 tokens are checked with it alone.
   */
  secret?: string | undefined
  /**
   * Where the issuer's JWKS is, when not at `${issuer}/.well-known/jwks.json`: one URL when a
   * single issuer is configured, or a map from issuer to URL. Never taken from a token.
   */
  jwksUri?: string | Readonly<Record<string, string>> | undefined
  /**
   * The accepted `alg` values. Default: `['RS256']`, plus `'HS256'` when `secret` is set.
   * Removing `'HS256'` is the last step of a migration to RS256.
   */
  algorithms?: readonly Algorithm[] | undefined
  /** How long fetched keys count as fresh, in ms. Default 3_600_000 (1 h). */
  cacheMaxAge?: number | undefined
  /** The least time between two JWKS fetches of one issuer, in ms. Default 30_000. */
  cooldown?: number | undefined
  /** How long one JWKS fetch may take, body included, in ms. Default 5_000. */
  timeout?: number | undefined
  /** Leeway for `exp`, `nbf` and `iat`, in seconds. Default 5. */
  clockTolerance?: number | undefined
  /**
   * How long past `cacheMaxAge` the last good keys keep serving while the issuer cannot be
   * reached (like `stale-if-error`, RFC 5861), in ms. Default 86_400_000 (24 h).
   */
  maxStale?: number | undefined
  /** Longer tokens are refused before decoding, in characters. Default 8192. */
  maxTokenLength?: number | undefined
  /**
   * Caches verified tokens (keyed by a SHA-256 of the token) until their `exp`; off by default.
   * See the README for the trade-off.
   */
  tokenCache?: { max: number } | false | undefined
  /** Receives {@link VerifierEvent}s: fetches, failures, stale keys, unknown kids, rejections. */
  onEvent?: ((event: VerifierEvent) => void) | undefined
  /**
   * The fetch used for JWKS requests, as is. Default: `globalThis.fetch`, looked up at each
   * fetch, except that `localhost` and `*.localhost` names resolve to loopback (RFC 6761 §6.3),
   * through a dispatcher used for those names only.
   */
  fetch?: FetchLike | undefined
  /**
   * Publishes the OAuth 2.0 Protected Resource Metadata of this API (RFC 9728) through the
   * adapters' `protectedResourceMetadata` middleware, and names its URL in every 401 challenge
   * (`resource_metadata="…"`). Off when absent.
   */
  resourceMetadata?: ResourceMetadataOptions | undefined
  /**
   * Accepts DPoP-bound tokens (RFC 9449) in the adapters: a token with `cnf.jkt` then needs
   * `Authorization: DPoP <token>` and a valid `DPoP` proof of its key. Off when absent; without
   * it the adapters read `Bearer` only and do not check `cnf`.
   */
  dpop?: DpopOptions | undefined
  /** The clock, in ms since the epoch. For tests; default `Date.now`. */
  now?: (() => number) | undefined
}

/**
 * The `dpop` option of {@link createVerifier}: how the adapters check DPoP proofs (RFC 9449 §4.3,
 * §7.1). A DPoP-bound token (`cnf.jkt`) is accepted only as `Authorization: DPoP <token>` with
 * one `DPoP` header: a proof JWT (`typ: dpop+jwt`, `alg` ES256, RS256, PS256 or EdDSA with an
 * Ed25519 key) signed by the public `jwk` of its header, whose RFC 7638 thumbprint is `jkt`, with
 * `htm` the request method, `htu` the request URL without query and fragment, `ath` the
 * base64url SHA-256 of the token, `iat` within `maxAge` plus `clockTolerance`, and a `jti` not
 * seen before within that window.
 */
export interface DpopOptions {
  /**
   * Refuse `Bearer` tokens altogether: every request needs a DPoP-bound token and its proof.
   * Default `false`: unbound tokens keep working as `Bearer`.
   */
  required?: boolean | undefined
  /**
   * How old a proof may be, in ms, judged by its `iat`; `clockTolerance` is added. Also how long
   * its `jti` is remembered. Default 60_000.
   */
  maxAge?: number | undefined
  /**
   * Where the `jti` of accepted proofs is remembered. Default: in memory, per verifier, bounded
   * (see {@link createMemoryReplayCache}). Share one (Redis, a database) between the instances
   * of an API so that a proof is accepted once across all of them.
   */
  replayCache?: DpopReplayCache | undefined
  /**
   * The origin the clients call, when a proxy stands in front of the API
   * (`https://api.example.com`): `htu` must then be this origin plus the request path, and the
   * URL the server sees itself is not accepted. Default: the URL of the request as received.
   */
  publicUrl?: string | undefined
}

/**
 * The fields of an RFC 9728 §2 Protected Resource Metadata document, in camelCase. The
 * document always says `bearer_methods_supported: ["header"]`: the adapters read the
 * `Authorization` header only.
 */
export interface ResourceMetadataOptions {
  /**
   * The resource identifier: an https (or http) URL without query or fragment. Default: the
   * `audience` option when it is one string.
   */
  resource?: string | undefined
  /** The authorization servers' issuer URLs. Default: the `issuer` option. */
  authorizationServers?: readonly string[] | undefined
  /** The scopes a client may request for this resource. */
  scopesSupported?: readonly string[] | undefined
  /** A human-readable name for the resource. */
  resourceName?: string | undefined
  /** A page of documentation for developers. */
  resourceDocumentation?: string | undefined
  /** The resource's policy on the use of data. */
  resourcePolicyUri?: string | undefined
  /** The resource's terms of service. */
  resourceTosUri?: string | undefined
  /** The resource's own JWK Set, for signed responses or encrypted requests. */
  jwksUri?: string | undefined
  /** JWS algorithms the resource signs responses with. */
  resourceSigningAlgValuesSupported?: readonly string[] | undefined
  /** Whether the resource supports mutual-TLS certificate-bound tokens (RFC 8705). */
  tlsClientCertificateBoundAccessTokens?: boolean | undefined
  /** The `authorization_details` types the resource accepts (RFC 9396). */
  authorizationDetailsTypesSupported?: readonly string[] | undefined
  /**
   * JWS algorithms accepted for DPoP proofs (RFC 9449). Set from the `dpop` option when it is
   * on, and then not allowed here.
   */
  dpopSigningAlgValuesSupported?: readonly string[] | undefined
  /**
   * Whether the resource always requires DPoP-bound tokens (RFC 9449). Set from `dpop.required`
   * when `dpop` is on, and then not allowed here.
   */
  dpopBoundAccessTokensRequired?: boolean | undefined
}

/**
 * An RFC 9728 §2 Protected Resource Metadata document, as served: snake_case members, the
 * ones left unset absent.
 */
export interface ProtectedResourceMetadata {
  resource: string
  authorization_servers: string[]
  bearer_methods_supported: ['header']
  scopes_supported?: string[]
  resource_name?: string
  [member: string]: unknown
}

/**
 * What a verifier reports through `onEvent`. Events carry no token content beyond a `kid` that
 * passed the format check.
 */
export type VerifierEvent =
  | {
      type: 'jwks_fetch'
      issuer: string
      uri: string
      /** Usable RS256 keys in the new set. */
      keys: number
      /** Entries skipped: `oct` or other key types, private members, duplicate kids, … */
      ignored: number
      durationMs: number
    }
  | { type: 'jwks_fetch_failed'; issuer: string; uri: string; reason: string; durationMs: number }
  | {
      type: 'jwks_stale'
      issuer: string
      /** How long ago the keys now served were fetched. */
      ageMs: number
    }
  | {
      type: 'kid_unknown'
      issuer: string
      kid: string
      /** Whether this lookup started (or joined) a refetch; false inside the cooldown. */
      refetch: boolean
    }
  | {
      type: 'token_rejected'
      code: VerifierErrorCode
      alg?: string
      issuer?: string
      /** What the verifier's options lack to accept such a token: HS256 without `secret`. */
      hint?: string
    }

/** Counters since the verifier was created; see {@link Verifier.stats}. */
export interface VerifierStats {
  /** JWKS requests started. */
  jwksFetches: number
  /** JWKS requests that failed (network, timeout, status, size, JSON, schema). */
  jwksFetchFailures: number
  /** Tokens verified with keys older than `cacheMaxAge` because the issuer was unreachable. */
  staleKeysServed: number
  /** Lookups of a well-formed `kid` missing from the cached set. */
  unknownKids: number
  /**
   * Tokens accepted per algorithm. When `HS256` stops growing, every client has moved to RS256
   * and `'HS256'` can be dropped from `algorithms`.
   */
  accepted: Record<Algorithm, number>
  /** Tokens refused, per code. */
  rejected: Partial<Record<VerifierErrorCode, number>>
  /** Verifications answered from the token cache (also counted in `accepted`). */
  tokenCacheHits: number
}
