/**
 * Field schemas of a client that authenticates with a key (RFC 7523 `private_key_jwt`): the
 * authentication method, an inline JWK Set of public keys, or the URL of one.
 *
 * @module
 */
import * as z from 'zod'
import { CLIENT_ASSERTION_ALGORITHMS, TOKEN_ENDPOINT_AUTH_METHODS } from '../model.js'

/** The most keys an inline `jwks` may hold: a key being used, the next one, and a spare few. */
export const MAX_CLIENT_JWKS_KEYS = 10

// RFC 7517 §9.3 and RFC 7518 §6.2.2, §6.3.2: the members that would make a JWK a private or a
// symmetric key. A client registers only what verifies its signatures.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const

const BASE64URL = /^[A-Za-z0-9_-]+$/

function base64url(max: number) {
  return z.string().max(max, `must be at most ${max} characters`).regex(BASE64URL, {
    message: 'must be base64url (A-Z, a-z, 0-9, - and _, without padding)',
  })
}

/** Bytes that `length` base64url characters without padding decode to. */
function decodedBytes(length: number): number {
  return Math.floor((length * 3) / 4)
}

const KTY_MESSAGE =
  'must be RSA (RS256, PS256) or EC (ES256, curve P-256); symmetric (oct) and other keys are not accepted'

/**
 * One public key of a client, as RFC 7517 writes it: RSA of 2048 to 8192 bits (RS256, PS256) or
 * EC P-256 (ES256). Private members (`d`, `p`, `q`, ...) and symmetric keys are refused: the
 * server only ever verifies with these keys.
 */
const PUBLIC_JWK_SHAPE = {
  kty: z.enum(['RSA', 'EC'], { error: KTY_MESSAGE }),
  kid: z.string().min(1).max(200).optional(),
  use: z.literal('sig', { error: 'must be sig' }).optional(),
  alg: z
    .enum(CLIENT_ASSERTION_ALGORITHMS, {
      error: `must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}`,
    })
    .optional(),
  key_ops: z
    .array(z.literal('verify', { error: 'must be verify' }))
    .max(1)
    .optional(),
  n: base64url(1366).optional(),
  e: base64url(16).optional(),
  crv: z.literal('P-256', { error: 'must be P-256 (ES256)' }).optional(),
  x: base64url(64).optional(),
  y: base64url(64).optional(),
  x5c: z.array(z.string().max(16_384)).max(10).optional(),
  x5t: base64url(64).optional(),
  'x5t#S256': base64url(64).optional(),
}

const PublicJwkSchema = z.looseObject(PUBLIC_JWK_SHAPE).superRefine((jwk, ctx) => {
  const known = new Set(Object.keys(PUBLIC_JWK_SHAPE))
  for (const member of Object.keys(jwk)) {
    if ((PRIVATE_MEMBERS as readonly string[]).includes(member)) {
      ctx.addIssue({
        code: 'custom',
        path: [member],
        message: 'is a private key member: jwks holds public keys only; remove it',
      })
    } else if (!known.has(member)) {
      ctx.addIssue({
        code: 'custom',
        path: [member],
        message: `unknown JWK member; expected one of ${[...known].join(', ')}`,
      })
    }
  }
  const need = (member: 'n' | 'e' | 'crv' | 'x' | 'y'): void => {
    if (jwk[member] === undefined) {
      ctx.addIssue({ code: 'custom', path: [member], message: `is required for kty ${jwk.kty}` })
    }
  }
  const refuse = (member: 'n' | 'e' | 'crv' | 'x' | 'y'): void => {
    if (jwk[member] !== undefined) {
      ctx.addIssue({ code: 'custom', path: [member], message: `is not a member of kty ${jwk.kty}` })
    }
  }
  if (jwk.kty === 'RSA') {
    need('n')
    need('e')
    ;(['crv', 'x', 'y'] as const).forEach(refuse)
    // RFC 7518 §3.3: RSA keys of at least 2048 bits; past 8192 bits only the cost grows.
    if (jwk.n !== undefined && BASE64URL.test(jwk.n) && decodedBytes(jwk.n.length) < 256) {
      ctx.addIssue({
        code: 'custom',
        path: ['n'],
        message: 'must be a modulus of 2048 bits or more',
      })
    }
    if (jwk.alg === 'ES256') {
      ctx.addIssue({
        code: 'custom',
        path: ['alg'],
        message: 'must be RS256 or PS256 for an RSA key',
      })
    }
  } else {
    need('crv')
    need('x')
    need('y')
    ;(['n', 'e'] as const).forEach(refuse)
    for (const member of ['x', 'y'] as const) {
      const value = jwk[member]
      if (value !== undefined && value.length !== 43) {
        ctx.addIssue({
          code: 'custom',
          path: [member],
          message: 'must be 32 bytes (43 base64url characters) for P-256',
        })
      }
    }
    if (jwk.alg !== undefined && jwk.alg !== 'ES256') {
      ctx.addIssue({ code: 'custom', path: ['alg'], message: 'must be ES256 for an EC key' })
    }
  }
})

/**
 * An inline JWK Set (RFC 7517 §5) of the client's public keys: 1 to 10 keys; when there are
 * several, each has a distinct `kid`, so that an assertion's `kid` picks exactly one.
 */
export const ClientJwksSchema = z
  .strictObject(
    {
      keys: z.array(PublicJwkSchema).min(1, 'must hold at least one key').max(MAX_CLIENT_JWKS_KEYS),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys' ? 'unknown field; expected keys' : undefined,
    },
  )
  .superRefine(
    (jwks, ctx) => {
      if (jwks.keys.length < 2) return
      const seen = new Set<string>()
      jwks.keys.forEach((key, index) => {
        if (key.kid === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['keys', index, 'kid'],
            message: 'is required when jwks holds several keys',
          })
        } else if (seen.has(key.kid)) {
          ctx.addIssue({
            code: 'custom',
            path: ['keys', index, 'kid'],
            message: `duplicate kid "${key.kid}"`,
          })
        } else {
          seen.add(key.kid)
        }
      })
    },
    { when: (payload) => payload.issues.length === 0 },
  )

/**
 * Whether `hostname` (as `URL.hostname` spells it) is loopback: `localhost`, a name under
 * `.localhost` (RFC 6761 §6.3), `127.0.0.1` or `[::1]`.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return (
    name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1' || name === '[::1]'
  )
}

/**
 * The URL of the client's JWK Set: https, or http for a loopback host only (a key set read over
 * plain http elsewhere could be swapped in transit); no user name or password, no fragment.
 */
export const JwksUriSchema = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((uri, ctx) => {
    if (!/^https?:\/\//i.test(uri) || /\s/.test(uri) || !URL.canParse(uri)) {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute https:// URL' })
      return
    }
    const url = new URL(uri)
    if (url.protocol === 'http:' && !isLoopbackHostname(url.hostname)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must use https (http is accepted for localhost, *.localhost, 127.0.0.1 and [::1] only)',
      })
    } else if (url.username !== '' || url.password !== '') {
      ctx.addIssue({ code: 'custom', message: 'must not hold a user name or password' })
    } else if (uri.includes('#')) {
      ctx.addIssue({ code: 'custom', message: 'must not contain a fragment (#)' })
    }
  })

/** `token_endpoint_auth_method` (RFC 7591 §2). */
export const TokenEndpointAuthMethodSchema = z.enum(TOKEN_ENDPOINT_AUTH_METHODS, {
  error: `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`,
})

/** The fields of a client these rules look at, in wire form. */
interface ClientAuthFields {
  client_secret?: unknown
  token_endpoint_auth_method?: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number]
  jwks?: unknown
  jwks_uri?: string
}

/**
 * The rules between `token_endpoint_auth_method`, `client_secret`, `jwks` and `jwks_uri`: a
 * method that needs a secret has one, `none` and `private_key_jwt` have none, and keys are
 * given, once, exactly for `private_key_jwt`.
 */
export function checkClientAuthentication(client: ClientAuthFields, ctx: z.RefinementCtx): void {
  const method = client.token_endpoint_auth_method
  const hasSecret = client.client_secret !== undefined
  const issue = (path: string, message: string): void => {
    ctx.addIssue({ code: 'custom', path: [path], message })
  }
  if (method === 'private_key_jwt') {
    if (hasSecret) {
      issue('client_secret', 'must not be set for private_key_jwt: the client signs with its key')
    }
    if (client.jwks === undefined && client.jwks_uri === undefined) {
      issue('token_endpoint_auth_method', 'private_key_jwt needs jwks or jwks_uri')
    }
    if (client.jwks !== undefined && client.jwks_uri !== undefined) {
      issue('jwks_uri', 'give jwks or jwks_uri, not both')
    }
    return
  }
  for (const field of ['jwks', 'jwks_uri'] as const) {
    if (client[field] !== undefined) {
      issue(field, 'is used only with token_endpoint_auth_method: private_key_jwt')
    }
  }
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !hasSecret) {
    issue('token_endpoint_auth_method', `${method} needs a client_secret`)
  }
  if (method === 'none' && hasSecret) {
    issue('client_secret', 'must not be set for token_endpoint_auth_method none (a public client)')
  }
}
