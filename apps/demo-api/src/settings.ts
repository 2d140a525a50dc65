import * as z from 'zod'

/** The demo API's settings, read from the environment by {@link parseSettings}. */
export interface Settings {
  /** ISSUERS: the accepted issuer URLs, comma-separated. */
  issuers: string[]
  /** AUDIENCE: the `aud` this API requires; unset means `aud` is not checked. */
  audience: string | undefined
  /** JWT_SECRET: the issuer's HS256 secret; unset means RS256 only. */
  secret: string | undefined
  /** ALGORITHMS: `RS256`, `HS256` or both, comma-separated; default per the verifier. */
  algorithms: ('HS256' | 'RS256')[] | undefined
  /** PORT, default 4000. */
  port: number
  /** HOST, default 127.0.0.1. */
  host: string
}

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')

const EnvSchema = z.object({
  ISSUERS: z
    .string({ error: 'is required: the accepted issuer URLs, comma-separated' })
    .transform(list)
    .pipe(
      z
        .array(z.url({ protocol: /^https?$/, error: 'must be http(s) URLs' }))
        .min(1, 'must name at least one issuer'),
    ),
  AUDIENCE: z.string().min(1).optional(),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  ALGORITHMS: z
    .string()
    .transform(list)
    .pipe(z.array(z.enum(['HS256', 'RS256'])).min(1))
    .optional(),
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
})

/**
 * Reads the settings from an environment, or throws an `Error` whose message has one line per
 * problem, `NAME: what is wrong`. Empty variables count as unset.
 */
export function parseSettings(env: Record<string, string | undefined>): Settings {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  )
  const parsed = EnvSchema.safeParse(present)
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `${String(issue.path[0] ?? 'environment')}: ${issue.message}`,
    )
    throw new Error(lines.join('\n'))
  }
  const { ISSUERS, AUDIENCE, JWT_SECRET, ALGORITHMS, PORT, HOST } = parsed.data
  return {
    issuers: ISSUERS,
    audience: AUDIENCE,
    secret: JWT_SECRET,
    algorithms: ALGORITHMS,
    port: PORT,
    host: HOST,
  }
}
