/**
 * The client metadata of a registration request (RFC 7591 §2), validated and normalised: what
 * a registered client may be, and the wire form stored and echoed for it.
 *
 * @module
 */
import { RedirectUriSchema } from '@tessera/config-schema'
import * as z from 'zod'
import { OAuthError } from '../errors.js'

/** How a registered client authenticates; `none` is a public client, which must use PKCE. */
export const REGISTRATION_AUTH_METHODS = [
  'none',
  'client_secret_basic',
  'client_secret_post',
] as const
export type RegistrationAuthMethod = (typeof REGISTRATION_AUTH_METHODS)[number]

/** The grant types a registered client may list. */
export const REGISTRATION_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const
export type RegistrationGrantType = (typeof REGISTRATION_GRANT_TYPES)[number]

/** Redirect URIs one registration may list. */
export const MAX_REDIRECT_URIS = 20
const MAX_URI_LENGTH = 2000
const MAX_TEXT_LENGTH = 200

/**
 * The metadata of a registered client in wire form (RFC 7591 §2), as stored and answered.
 * Fields a client sent that are not listed here are ignored and not echoed.
 */
export interface ClientMetadata {
  redirect_uris: string[]
  token_endpoint_auth_method: RegistrationAuthMethod
  grant_types: RegistrationGrantType[]
  response_types: ['code']
  /** The scopes granted, space-separated: those asked ∩ the tenant's dynamic scopes. */
  scope: string
  client_name?: string
  client_uri?: string
  software_id?: string
  software_version?: string
}

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/
// C0 and C1 controls: a name or version is shown to people and written to logs.
const CONTROL = /\p{Cc}/u
// In a `u` regex a surrogate pair is one code point: this matches lone surrogates only, which a
// JSON escape (`"\ud800"`) can carry but no stored text should.
const LONE_SURROGATE = /\p{Surrogate}/u
/** The most JSON the normalised metadata of one client may take, in UTF-16 code units. */
export const MAX_METADATA_JSON = 32_768
// RFC 8252 §7.3 and §8.3: plain http is for a native app's loopback listener only.
const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?([/?]|$)/i

function text(max: number) {
  return z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((value) => !CONTROL.test(value), 'must not contain control characters')
    .refine((value) => !LONE_SURROGATE.test(value), 'must be well-formed Unicode')
}

/** A redirect URI a client may register: a configured client's rules, and http for loopback only. */
const RegisteredRedirectUriSchema = z
  .string({ error: 'must be a string' })
  .max(MAX_URI_LENGTH, `must be at most ${MAX_URI_LENGTH} characters`)
  .superRefine((uri, ctx) => {
    const base = RedirectUriSchema.safeParse(uri)
    if (CONTROL.test(uri) || LONE_SURROGATE.test(uri)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must not contain control characters or lone surrogates',
      })
    } else if (!base.success) {
      for (const issue of base.error.issues)
        ctx.addIssue({ code: 'custom', message: issue.message })
    } else if (/^http:/i.test(uri) && !LOOPBACK_HTTP.test(uri)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'http is allowed only for a loopback address (127.0.0.1, [::1] or localhost); use https',
      })
    }
  })

function distinct<Item>(values: readonly Item[]): boolean {
  return new Set(values).size === values.length
}

/** An array of strings, each at most once; `noun` names one item in the duplicate message. */
function listOf<Item extends z.ZodType>(item: Item, noun: string) {
  return z
    .array(item, { error: 'must be an array of strings' })
    .refine(distinct, `must not list a ${noun} twice`)
}

const RequestSchema = z.object(
  {
    redirect_uris: listOf(RegisteredRedirectUriSchema, 'redirect URI')
      .min(1, 'must list at least one redirect URI')
      .max(MAX_REDIRECT_URIS, `must list at most ${MAX_REDIRECT_URIS} redirect URIs`)
      .optional(),
    token_endpoint_auth_method: z
      .enum(REGISTRATION_AUTH_METHODS, {
        error: (issue) =>
          typeof issue.input === 'string'
            ? `"${issue.input}" is not supported; use ${REGISTRATION_AUTH_METHODS.join(', ')}`
            : 'must be a string',
      })
      .default('client_secret_basic'),
    grant_types: listOf(
      z.enum(REGISTRATION_GRANT_TYPES, {
        error: (issue) =>
          typeof issue.input === 'string'
            ? `"${issue.input}" is not allowed; registered clients may use ${REGISTRATION_GRANT_TYPES.join(' and ')}`
            : 'must be a string',
      }),
      'grant type',
    ).default(['authorization_code']),
    response_types: listOf(
      z.literal('code', {
        error: (issue) =>
          typeof issue.input === 'string'
            ? `"${issue.input}" is not supported; the only response type is code`
            : 'must be a string',
      }),
      'response type',
    ).default(['code']),
    scope: z.string({ error: 'must be a string of space-separated scopes' }).optional(),
    client_name: text(100).optional(),
    client_uri: text(MAX_URI_LENGTH)
      .refine(
        (uri) => /^https?:\/\//i.test(uri) && URL.canParse(uri),
        'must be an absolute http or https URL',
      )
      .optional(),
    software_id: text(MAX_TEXT_LENGTH).optional(),
    software_version: text(MAX_TEXT_LENGTH).optional(),
  },
  { error: 'the request body must be a JSON object' },
)

const KNOWN_FIELDS = new Set(Object.keys(RequestSchema.shape))

/**
 * The known fields of a request, without those sent as `null` (some clients write every field
 * they know of, absent ones as null) and without the unknown ones (RFC 7591 §2: ignored).
 */
function knownFields(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  return Object.fromEntries(
    Object.entries(body).filter(([key, value]) => KNOWN_FIELDS.has(key) && value !== null),
  )
}

/** `redirect_uris[0]: must …`: where a problem is, in the request's own terms. */
function describe(issue: z.core.$ZodIssue): string {
  const where = issue.path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`,
    )
    .join('')
  return where === '' ? issue.message : `${where}: ${issue.message}`
}

/**
 * Validates the metadata of a registration (or an RFC 7592 update) against what registered
 * clients of this tenant may be, and normalises it: defaults filled in (RFC 7591 §2:
 * `token_endpoint_auth_method` client_secret_basic, `grant_types` authorization_code,
 * `response_types` code, `scope` every scope the tenant allows), the scope narrowed to the
 * tenant's dynamic scopes.
 *
 * @param allowedScopes `dynamic_clients.scopes` of the tenant
 * @throws OAuthError `invalid_redirect_uri` for a problem with `redirect_uris`, else
 *   `invalid_client_metadata`, its description naming the field and the rule
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-2
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-3.2.2
 */
export function parseClientMetadata(
  body: unknown,
  allowedScopes: readonly string[],
): ClientMetadata {
  const parsed = RequestSchema.safeParse(knownFields(body))
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const code =
      issue?.path[0] === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata'
    throw new OAuthError(code, issue === undefined ? 'invalid client metadata' : describe(issue))
  }
  const request = parsed.data
  // RFC 7591 §2.1: grant_types and response_types must agree; code needs authorization_code.
  if (!request.grant_types.includes('authorization_code')) {
    throw new OAuthError(
      'invalid_client_metadata',
      'grant_types must include authorization_code (refresh tokens come from a sign-in)',
    )
  }
  if (request.redirect_uris === undefined) {
    throw new OAuthError(
      'invalid_redirect_uri',
      'redirect_uris is required for the authorization_code grant',
    )
  }
  const metadata: ClientMetadata = {
    redirect_uris: request.redirect_uris,
    token_endpoint_auth_method: request.token_endpoint_auth_method,
    grant_types: request.grant_types,
    response_types: ['code'],
    scope: grantedScope(request.scope, allowedScopes),
  }
  for (const field of ['client_name', 'client_uri', 'software_id', 'software_version'] as const) {
    const value = request[field]
    if (value !== undefined) metadata[field] = value
  }
  // Bounded whatever MAX_BODY_BYTES allows: escapes (`"`, `\`) can make the stored JSON longer
  // than the fields' own lengths say.
  if (JSON.stringify(metadata).length > MAX_METADATA_JSON) {
    throw new OAuthError(
      'invalid_client_metadata',
      `the client metadata is too large: at most ${MAX_METADATA_JSON} characters of JSON`,
    )
  }
  return metadata
}

/** The scope asked ∩ the tenant's dynamic scopes, in the tenant's order; all of them when none is asked. */
function grantedScope(asked: string | undefined, allowed: readonly string[]): string {
  const tokens = (asked ?? '').split(' ').filter((token) => token !== '')
  if (tokens.length === 0) return allowed.join(' ')
  const bad = tokens.find((token) => !SCOPE_TOKEN.test(token))
  if (bad !== undefined) {
    throw new OAuthError(
      'invalid_client_metadata',
      'scope: must be scope tokens separated by single spaces (RFC 6749 §3.3)',
    )
  }
  const granted = allowed.filter((scope) => tokens.includes(scope))
  if (granted.length === 0) {
    throw new OAuthError(
      'invalid_client_metadata',
      `scope: none of the scopes asked may be registered; this server allows ${allowed.join(' ')}`,
    )
  }
  return granted.join(' ')
}
