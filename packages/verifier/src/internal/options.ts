import * as z from 'zod'
import type { Algorithm, FetchLike, VerifierEvent, VerifierOptions } from '../options.js'
import { DpopSchema, resolveDpop } from './dpop-options.js'
import type { ResolvedDpop } from './dpop-options.js'
import { ResourceMetadataSchema, resolveResourceMetadata } from './resource-metadata.js'
import type { ResolvedResourceMetadata } from './resource-metadata.js'

/** The HS256 secret's minimum length, as the issuer demands of `JWT_SECRET`. */
export const MIN_SECRET_LENGTH = 32

/** {@link VerifierOptions} checked and completed with defaults. */
export interface ResolvedOptions {
  issuers: ReadonlySet<string>
  /** issuer → JWKS URL */
  jwksUris: ReadonlyMap<string, string>
  audience: string[] | undefined
  secret: string | undefined
  algorithms: ReadonlySet<Algorithm>
  cacheMaxAge: number
  cooldown: number
  timeout: number
  clockTolerance: number
  maxStale: number
  maxTokenLength: number
  tokenCacheMax: number | undefined
  onEvent: ((event: VerifierEvent) => void) | undefined
  fetch: FetchLike | undefined
  now: () => number
  resourceMetadata: ResolvedResourceMetadata | undefined
  dpop: ResolvedDpop | undefined
}

const httpUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value)
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.hash === ''
    } catch {
      return false
    }
  },
  { message: 'must be an absolute http(s) URL' },
)
const duration = (max: number) => z.number().int().min(0).max(max)
const DAY = 86_400_000
const fn = <T>() =>
  z.custom<T>((value) => typeof value === 'function', { message: 'must be a function' })

const OptionsSchema = z.strictObject({
  issuer: z.union([httpUrl, z.array(httpUrl).min(1, 'must name at least one issuer')]),
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  secret: z
    .string()
    .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`)
    .optional(),
  jwksUri: z.union([httpUrl, z.record(z.string(), httpUrl)]).optional(),
  algorithms: z
    .array(z.enum(['HS256', 'RS256']))
    .min(1, 'must list at least one algorithm')
    .optional(),
  cacheMaxAge: duration(30 * DAY)
    .min(1_000)
    .optional(),
  cooldown: duration(DAY).optional(),
  timeout: duration(120_000).min(1).optional(),
  clockTolerance: z.number().min(0).max(3600).optional(),
  maxStale: duration(365 * DAY).optional(),
  maxTokenLength: z.number().int().min(64).max(1_048_576).optional(),
  tokenCache: z
    .union([z.literal(false), z.strictObject({ max: z.number().int().min(1).max(10_000_000) })])
    .optional(),
  onEvent: fn<(event: VerifierEvent) => void>().optional(),
  fetch: fn<FetchLike>().optional(),
  now: fn<() => number>().optional(),
  resourceMetadata: ResourceMetadataSchema.optional(),
  dpop: DpopSchema.optional(),
})

function fail(path: string, message: string): never {
  throw new TypeError(`createVerifier: options.${path}: ${message}`)
}

/** The default JWKS location of an issuer: where a Tessera tenant publishes its keys. */
export function defaultJwksUri(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/jwks.json`
}

/**
 * Checks the options once, at creation, and throws a single `TypeError` naming the first bad
 * option, so that nothing fails later per request.
 */
export function resolveOptions(input: VerifierOptions): ResolvedOptions {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError('createVerifier: options must be an object')
  }
  // `undefined` stands for "default" everywhere, as `secret: process.env.JWT_SECRET` needs.
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined))
  const parsed = OptionsSchema.safeParse(defined)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    if (issue === undefined) throw new TypeError('createVerifier: invalid options')
    const at = issue.path.map((segment) => `${String(segment)}.`).join('')
    if (issue.code === 'unrecognized_keys') {
      fail(issue.keys.map((key) => at + key).join(', '), 'not an option')
    }
    fail(issue.path.map(String).join('.'), issue.message.replace(/^Invalid input: /, ''))
  }
  const options = parsed.data
  const issuers = typeof options.issuer === 'string' ? [options.issuer] : options.issuer
  const algorithms =
    options.algorithms ?? (options.secret === undefined ? ['RS256'] : ['RS256', 'HS256'])
  if (algorithms.includes('HS256') && options.secret === undefined) {
    fail('secret', 'required when algorithms includes HS256')
  }
  const jwksUris = new Map(issuers.map((issuer) => [issuer, defaultJwksUri(issuer)]))
  if (typeof options.jwksUri === 'string') {
    if (issuers.length > 1)
      fail('jwksUri', 'must map each issuer to its URL when there are several issuers')
    jwksUris.set(issuers[0] as string, options.jwksUri)
  } else if (options.jwksUri !== undefined) {
    for (const [issuer, uri] of Object.entries(options.jwksUri)) {
      if (!jwksUris.has(issuer))
        fail(`jwksUri`, `names ${issuer}, which is not a configured issuer`)
      jwksUris.set(issuer, uri)
    }
  }
  const audience = options.audience === undefined ? undefined : [options.audience].flat()
  const dpop = options.dpop === undefined ? undefined : resolveDpop(options.dpop)
  return {
    issuers: new Set(issuers),
    jwksUris,
    audience,
    secret: options.secret,
    algorithms: new Set(algorithms),
    cacheMaxAge: options.cacheMaxAge ?? 3_600_000,
    cooldown: options.cooldown ?? 30_000,
    timeout: options.timeout ?? 5_000,
    clockTolerance: options.clockTolerance ?? 5,
    maxStale: options.maxStale ?? DAY,
    maxTokenLength: options.maxTokenLength ?? 8192,
    tokenCacheMax: options.tokenCache === false ? undefined : options.tokenCache?.max,
    onEvent: options.onEvent,
    fetch: options.fetch,
    now: options.now ?? Date.now,
    resourceMetadata:
      options.resourceMetadata === undefined
        ? undefined
        : resolveResourceMetadata(options.resourceMetadata, audience, issuers, dpop),
    dpop,
  }
}
