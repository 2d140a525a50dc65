import * as z from 'zod'
import type { DpopReplayCache } from '../dpop-replay-cache.js'
import type { DpopOptions } from '../options.js'

/**
 * The algorithms a DPoP proof may use: asymmetric only (RFC 9449 §4.3), the ones the issuer
 * lists as `dpop_signing_alg_values_supported`. `EdDSA` with Ed25519 keys.
 */
export const DPOP_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const

/**
 * The `alg` values a proof may carry: the advertised ones and `Ed25519`, the fully specified
 * name (RFC 9864) of EdDSA with an Ed25519 key, which oauth4webapi 3 signs such keys with.
 * Challenges and metadata name only {@link DPOP_ALGORITHMS}.
 */
export const DPOP_ACCEPTED_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'] as const

/** The `dpop` option, checked and completed with defaults. */
export interface ResolvedDpop {
  required: boolean
  /** How old a proof may be, in ms, before `clockTolerance`. */
  maxAge: number
  /** `undefined`: the engine makes a memory cache on its own clock. */
  replayCache: DpopReplayCache | undefined
  /** The public origin (`https://api.example.com`), or `undefined`: the request's own URL. */
  publicOrigin: string | undefined
}

const origin = z.string().refine(
  (value) => {
    try {
      const url = new URL(value)
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        url.pathname === '/' &&
        url.search === '' &&
        url.hash === '' &&
        url.username === '' &&
        url.password === '' &&
        // No stray `?` or `#` either, which URL parsing would drop silently.
        !/[?#]/.test(value)
      )
    } catch {
      return false
    }
  },
  { message: 'must be an origin: http(s)://host[:port], without path, query or fragment' },
)

const replayCache = z.custom<DpopReplayCache>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { add?: unknown }).add === 'function',
  { message: 'must be an object with an add(jti, expiresAt) method' },
)

/** The `dpop` option of `createVerifier`. */
export const DpopSchema: z.ZodType<DpopOptions> = z.strictObject({
  required: z.boolean().optional(),
  maxAge: z.number().int().min(1_000).max(3_600_000).optional(),
  replayCache: replayCache.optional(),
  publicUrl: origin.optional(),
})

/** Completes the checked option with its defaults. */
export function resolveDpop(options: DpopOptions): ResolvedDpop {
  return {
    required: options.required ?? false,
    maxAge: options.maxAge ?? 60_000,
    replayCache: options.replayCache,
    publicOrigin: options.publicUrl === undefined ? undefined : new URL(options.publicUrl).origin,
  }
}
