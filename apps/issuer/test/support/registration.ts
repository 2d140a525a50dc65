import { send } from './http.js'
import type { HttpResponse } from './http.js'

/** The registration fixture's tenants (test/fixtures/registration). */
export const REG = {
  host: 'reg.test',
  issuer: 'http://reg.test:8443',
  listedClient: '0c000000-0000-4000-8000-000000000001',
  listedSecret: 'listed-secret-0123',
}
export const GATED = { host: 'gated.test', token: 'initial-access-token-0123456789' }
export const CLOSED = { host: 'closed.test' }

/**
 * The environment of the registration fixture: the gated tenant's initial access token, and one
 * trusted proxy, so that each test sends from addresses of its own (X-Forwarded-For).
 */
export const REGISTRATION_VARS = { TRUST_PROXY: '1', REGISTRATION_TOKEN: GATED.token }

/** The answer of a registration (RFC 7591 §3.2.1), as the tests read it. */
export interface Registered {
  client_id: string
  client_secret?: string
  client_secret_expires_at?: number
  client_id_issued_at: number
  registration_access_token: string
  registration_client_uri: string
  [field: string]: unknown
}

let next = 0

/**
 * A client address of its own (the issuer runs behind TRUST_PROXY=1): registrations are
 * throttled per address, and each test counts only what it sends itself.
 */
export function freshAddress(): string {
  next += 1
  return `10.${(next >> 16) & 255}.${(next >> 8) & 255}.${next & 255}`
}

export interface RegisterOptions {
  /** X-Forwarded-For (default: a fresh address). */
  address?: string
  /** The bearer token (initial access token) sent, if any. */
  token?: string
  /** The raw body, instead of `body` as JSON. */
  raw?: string | Buffer
  contentType?: string
}

/** POST /register. */
export function register(
  url: string,
  host: string,
  body: unknown,
  options: RegisterOptions = {},
): Promise<HttpResponse> {
  return send(url, {
    method: 'POST',
    path: '/register',
    host,
    headers: {
      'content-type': options.contentType ?? 'application/json',
      'x-forwarded-for': options.address ?? freshAddress(),
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    body: options.raw ?? JSON.stringify(body),
  })
}

/** GET, PUT or DELETE on a registration client URI, with a registration access token. */
export function manage(
  url: string,
  host: string,
  method: 'GET' | 'PUT' | 'DELETE',
  clientId: string,
  token: string | undefined,
  body?: unknown,
): Promise<HttpResponse> {
  return send(url, {
    method,
    path: `/register/${clientId}`,
    host,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

/** POST to /token, /revoke or /introspect with a form body. */
export function postEndpoint(
  url: string,
  host: string,
  path: '/token' | '/revoke' | '/introspect',
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return send(url, {
    method: 'POST',
    path,
    host,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': freshAddress(),
      ...headers,
    },
    body: new URLSearchParams(params).toString(),
  })
}
