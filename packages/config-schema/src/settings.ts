/**
 * Settings read from the environment (each also a CLI flag).
 *
 * @see docs/settings.md
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import * as z from 'zod'
import { errorMap, flattenIssues } from './internal/issues.js'
import { MIN_SECRET_LENGTH } from './internal/fields.js'
import { ConfigError } from './model.js'
import type { ConfigIssue } from './model.js'

/**
 * The environment variables {@link parseSettings} reads, in the order of docs/settings.md.
 * The CLI maps each to a flag: `JWT_SECRET` ↔ `--jwt-secret`.
 *
 * @see docs/settings.md
 */
export const SETTING_NAMES = [
  'JWT_SECRET',
  'TOKEN_EXPIRATION_IN_HOURS',
  'REFRESH_TOKEN_EXPIRATION_IN_HOURS',
  'AUTHORIZATION_CODE_TTL_SECONDS',
  'SESSION_TTL_HOURS',
  'PORT',
  'HOST',
  'TESSERA_CONFIG',
  'TESSERA_CONFIG_SOURCE',
  'DATABASE_URL',
  'DATABASE_MAX_CONNECTIONS',
  'KEY_ROTATE_ON_RESTART',
  'KEY_ROTATION_DAYS',
  'KEY_PUBLISH_AHEAD_SECONDS',
  'JWKS_GRACE_HOURS',
  'KEY_ENCRYPTION_SECRET',
  'TRUST_PROXY',
  'MAX_BODY_BYTES',
  'PROVIDER_TIMEOUT_MS',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'ADMIN_TOKEN',
  'PASSWORD_MAX_FAILURES',
  'PASSWORD_MAX_FAILURES_PER_ADDRESS',
  'PASSWORD_FAILURE_WINDOW_SECONDS',
  'CLIENT_AUTH_MAX_FAILURES',
  'CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS',
  'LOG_LEVEL',
  'TESSERA_KUBERNETES_NAMESPACE',
  'WORKERS',
] as const

/** One of {@link SETTING_NAMES}. */
export type SettingName = (typeof SETTING_NAMES)[number]

/** `tessera dev` (local, relaxed defaults) or `tessera start` (production). */
export type SettingsMode = 'dev' | 'start'

/** Log levels, most to least severe; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * The issuer's settings, parsed and with defaults applied. Each property names its variable.
 *
 * @see docs/settings.md
 */
export interface Settings {
  /** JWT_SECRET: the HS256 secret, at least 32 characters. Unset: no HS256 tenant may load. */
  jwtSecret?: string
  /** TOKEN_EXPIRATION_IN_HOURS: access-token lifetime (default 2; decimals allowed). */
  tokenExpirationHours: number
  /** REFRESH_TOKEN_EXPIRATION_IN_HOURS: refresh-token family lifetime (default 720). */
  refreshTokenExpirationHours: number
  /** AUTHORIZATION_CODE_TTL_SECONDS: authorization-code lifetime (default 60). */
  authorizationCodeTtlSeconds: number
  /**
   * SESSION_TTL_HOURS: lifetime of an OpenID Connect sign-in session (the `tessera_session`
   * cookie that spares the login form), from the sign-in (default 8; decimals allowed).
   */
  sessionTtlHours: number
  /** PORT: listen port, 0 for any free one (default 3000). */
  port: number
  /** HOST: listen address (default 0.0.0.0; dev: 127.0.0.1). */
  host: string
  /**
   * TESSERA_CONFIG: tenant YAML, a file or a directory (default ./config; dev: ./examples). With
   * the kubernetes source, the directory that the Tenants' provider paths resolve against.
   */
  config: string
  /** TESSERA_CONFIG_SOURCE: `files`, or `kubernetes` to watch Tenant resources (default files). */
  configSource: 'files' | 'kubernetes'
  /** DATABASE_URL: `sqlite:PATH`, `memory:` (tests), `postgres://…` (default sqlite:./data/tessera.db). */
  databaseUrl: string
  /**
   * DATABASE_MAX_CONNECTIONS: connections in the PostgreSQL pool of each process, 1 to 1000
   * (default 10); ignored for SQLite and memory:.
   */
  databaseMaxConnections: number
  /** KEY_ROTATE_ON_RESTART: a start on a later date than the newest key makes a new key (default true). */
  keyRotateOnRestart: boolean
  /**
   * KEY_PUBLISH_AHEAD_SECONDS: a key made while another signs is published this long before it
   * signs, 0 to 86400 (default 60; 0 signs at once).
   */
  keyPublishAheadSeconds: number
  /** KEY_ROTATION_DAYS: a running issuer rotates a key older than this (default 90). */
  keyRotationDays: number
  /** JWKS_GRACE_HOURS: how long retired keys stay published; at least, and by default, 2 × the token lifetime. */
  jwksGraceHours: number
  /** KEY_ENCRYPTION_SECRET: encrypts private keys at rest (AES-256-GCM). */
  keyEncryptionSecret?: string
  /**
   * TRUST_PROXY: `false` (default), or how many proxies stand in front of the issuer. With `n`,
   * the client address is the n-th entry from the right of X-Forwarded-For, and the host and
   * protocol are the right-most X-Forwarded-Host and X-Forwarded-Proto values (the nearest
   * proxy's).
   */
  trustProxy: false | number
  /**
   * MAX_BODY_BYTES: largest accepted request body after decoding, 1 to 1048576 bytes (default
   * 16384).
   */
  maxBodyBytes: number
  /**
   * PROVIDER_TIMEOUT_MS: how long one provider script may take to answer, in milliseconds,
   * before the sign-in is answered 503 (default 5000; at most 2147483647, the longest timer).
   */
  providerTimeoutMs: number
  /**
   * ADMIN_PORT: port of the admin listener (/metrics, /healthz, /readyz): 0 for any free one,
   * `off` for none (default 9464).
   */
  adminPort: number | 'off'
  /** ADMIN_HOST: listen address of the admin listener (default 127.0.0.1). */
  adminHost: string
  /**
   * ADMIN_TOKEN: the bearer token of the admin API (`/admin/*` on the admin listener), at least
   * 32 characters of the RFC 6750 token alphabet. Unset: the admin API answers 404.
   */
  adminToken?: string
  /**
   * PASSWORD_MAX_FAILURES (extra): failed password checks allowed per tenant and username within
   * the window before 429 (default 5).
   */
  passwordMaxFailures: number
  /**
   * PASSWORD_MAX_FAILURES_PER_ADDRESS (extra): failed password checks allowed per client address
   * within the window, across usernames (default 50).
   */
  passwordMaxFailuresPerAddress: number
  /** PASSWORD_FAILURE_WINDOW_SECONDS (extra): the window of both failure counts (default 900). */
  passwordFailureWindowSeconds: number
  /**
   * CLIENT_AUTH_MAX_FAILURES: failed client authentications allowed per client_id and address
   * within the password window before 429 (default 20).
   */
  clientAuthMaxFailures: number
  /**
   * CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: failed client authentications allowed per address
   * within the password window, across client ids (default 100).
   */
  clientAuthMaxFailuresPerAddress: number
  /** LOG_LEVEL (extra): fatal, error, warn, info, debug, trace or silent (default info). */
  logLevel: LogLevel
  /**
   * TESSERA_KUBERNETES_NAMESPACE (extra): the namespace whose Tenant resources the kubernetes
   * source serves. Default: the pod's own namespace (the service-account namespace file, see
   * {@link SERVICE_ACCOUNT_NAMESPACE_FILE}), else `default`.
   */
  kubernetesNamespace: string
  /**
   * WORKERS (extra): how many processes `tessera start` runs on one port, 1 to
   * {@link MAX_WORKERS}, or `auto` for the machine's available parallelism (default 1). `tessera
   * dev` runs one process and refuses more.
   */
  workers: number
}

/** The most WORKERS accepted: beyond it, more processes only add memory and store connections. */
export const MAX_WORKERS = 64

/**
 * Where Kubernetes mounts the namespace of a pod's service account: the default of
 * TESSERA_KUBERNETES_NAMESPACE when the issuer runs in a cluster.
 */
export const SERVICE_ACCOUNT_NAMESPACE_FILE =
  '/var/run/secrets/kubernetes.io/serviceaccount/namespace'

/** A namespace name is a DNS label (RFC 1123), as Kubernetes validates it. */
const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/

/**
 * RFC 6750 §2.1 b64token: what can follow `Bearer ` in an Authorization header. A token outside
 * it (a space, a trailing newline from a file) could never be sent, so it is refused at start.
 */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/
const INTEGER = /^\d+$/
const TRUST_PROXY_MESSAGE = 'must be false or the number of proxies in front (1, 2, …)'
const BOOLEANS: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
}

/** A decimal number in a range; the message never repeats the value. */
function number(options: { integer: boolean; min: number; max?: number; message: string }) {
  return z.string().transform((text, ctx) => {
    const value = (options.integer ? INTEGER : DECIMAL).test(text) ? Number(text) : Number.NaN
    if (!(value >= options.min && value <= (options.max ?? Number.MAX_SAFE_INTEGER))) {
      ctx.addIssue({ code: 'custom', message: options.message })
      return z.NEVER
    }
    return value
  })
}

const positiveNumber = () =>
  number({ integer: false, min: Number.MIN_VALUE, message: 'must be a positive number' })
const positiveInteger = () =>
  number({ integer: true, min: 1, message: 'must be a positive integer' })

const boolean = () =>
  z.string().transform((text, ctx) => {
    const value = BOOLEANS[text.toLowerCase()]
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be one of true, false, 1, 0, yes, no' })
      return z.NEVER
    }
    return value
  })

/**
 * TRUST_PROXY: `false` (or `0`) or a count of proxies. A yes/no value is refused rather than
 * guessed: `true` used to take the left-most X-Forwarded-For entry, which the client writes.
 */
const proxyCount = () =>
  z.string().transform((text, ctx): false | number => {
    const value = text.trim().toLowerCase()
    if (value === 'false' || value === '0') return false
    if (INTEGER.test(value) && Number(value) <= Number.MAX_SAFE_INTEGER) return Number(value)
    ctx.addIssue({
      code: 'custom',
      message: ['true', 'yes', 'on'].includes(value)
        ? `${TRUST_PROXY_MESSAGE}; true is no longer accepted: give the number of proxies that append to X-Forwarded-For, e.g. TRUST_PROXY=1`
        : TRUST_PROXY_MESSAGE,
    })
    return z.NEVER
  })

/** ADMIN_PORT: a port, 0 for any free one, or `off`. */
const adminPort = () =>
  z.string().transform((text, ctx): number | 'off' => {
    if (text.trim().toLowerCase() === 'off') return 'off'
    const value = INTEGER.test(text) ? Number(text) : Number.NaN
    if (!(value >= 0 && value <= 65535)) {
      ctx.addIssue({ code: 'custom', message: 'must be off or an integer between 0 and 65535' })
      return z.NEVER
    }
    return value
  })

/**
 * WORKERS: a count, or `auto` (kept as is: {@link parseSettings} resolves it on this machine).
 */
const workerCount = () =>
  z.string().transform((text, ctx): number | 'auto' => {
    const value = text.trim().toLowerCase()
    if (value === 'auto') return 'auto'
    const count = INTEGER.test(value) ? Number(value) : Number.NaN
    if (!(count >= 1 && count <= MAX_WORKERS)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be auto or an integer between 1 and ${MAX_WORKERS}`,
      })
      return z.NEVER
    }
    return count
  })

/**
 * ADMIN_TOKEN: one problem at a time, the length first; the messages never repeat the value
 * (settings problems are printed, and this is a secret).
 */
const adminToken = () =>
  z.string().check((ctx) => {
    const { value } = ctx
    if (value.length < MIN_SECRET_LENGTH) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be at least ${MIN_SECRET_LENGTH} characters`,
      })
    } else if (!BEARER_TOKEN.test(value)) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message:
          'must be letters, digits and - . _ ~ + / (then = padding only), as a bearer token is ' +
          'sent (RFC 6750 §2.1); e.g. openssl rand -base64 32',
      })
    }
  })

/** An environment variable: an empty value counts as unset. */
function variable<Schema extends z.ZodType<unknown, string | undefined>>(schema: Schema) {
  return z
    .string()
    .optional()
    .transform((text) => (text === '' ? undefined : text))
    .pipe(schema)
}

/**
 * The settings variables, keyed by their environment names (unknown variables are ignored, so
 * `process.env` can be passed as is). Mode-dependent values (HOST, TESSERA_CONFIG) and
 * JWKS_GRACE_HOURS stay undefined when unset: {@link parseSettings} fills them in.
 *
 * @see docs/settings.md
 */
export const SettingsSchema = z.object({
  JWT_SECRET: variable(
    z
      .string()
      .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`)
      .optional(),
  ),
  TOKEN_EXPIRATION_IN_HOURS: variable(positiveNumber().default(2)),
  REFRESH_TOKEN_EXPIRATION_IN_HOURS: variable(positiveNumber().default(720)),
  AUTHORIZATION_CODE_TTL_SECONDS: variable(positiveInteger().default(60)),
  SESSION_TTL_HOURS: variable(positiveNumber().default(8)),
  PORT: variable(
    number({
      integer: true,
      min: 0,
      max: 65535,
      message: 'must be an integer between 0 and 65535',
    }).default(3000),
  ),
  HOST: variable(z.string().optional()),
  TESSERA_CONFIG: variable(z.string().optional()),
  TESSERA_CONFIG_SOURCE: variable(
    z.enum(['files', 'kubernetes'], { error: 'must be files or kubernetes' }).default('files'),
  ),
  DATABASE_URL: variable(
    z
      .string()
      .refine((url) => /^(?:sqlite:|memory:|postgres:\/\/|postgresql:\/\/)/.test(url), {
        message: 'must start with sqlite:, memory:, postgres:// or postgresql://',
      })
      .default('sqlite:./data/tessera.db'),
  ),
  DATABASE_MAX_CONNECTIONS: variable(
    number({
      integer: true,
      min: 1,
      max: 1000,
      message: 'must be an integer between 1 and 1000',
    }).default(10),
  ),
  KEY_ROTATE_ON_RESTART: variable(boolean().default(true)),
  KEY_ROTATION_DAYS: variable(positiveNumber().default(90)),
  KEY_PUBLISH_AHEAD_SECONDS: variable(
    number({
      integer: true,
      min: 0,
      max: 86_400,
      message: 'must be an integer between 0 and 86400',
    }).default(60),
  ),
  JWKS_GRACE_HOURS: variable(positiveNumber().optional()),
  KEY_ENCRYPTION_SECRET: variable(z.string().optional()),
  TRUST_PROXY: variable(proxyCount().default(false)),
  MAX_BODY_BYTES: variable(
    number({
      integer: true,
      min: 1,
      max: 1_048_576,
      message: 'must be an integer between 1 and 1048576',
    }).default(16_384),
  ),
  // Node fires a longer timer at once, so the cap keeps a large value from meaning "no time".
  PROVIDER_TIMEOUT_MS: variable(
    number({
      integer: true,
      min: 1,
      max: 2_147_483_647,
      message: 'must be an integer between 1 and 2147483647',
    }).default(5000),
  ),
  ADMIN_PORT: variable(adminPort().default(9464)),
  ADMIN_HOST: variable(z.string().default('127.0.0.1')),
  ADMIN_TOKEN: variable(adminToken().optional()),
  PASSWORD_MAX_FAILURES: variable(positiveInteger().default(5)),
  PASSWORD_MAX_FAILURES_PER_ADDRESS: variable(positiveInteger().default(50)),
  PASSWORD_FAILURE_WINDOW_SECONDS: variable(positiveInteger().default(900)),
  CLIENT_AUTH_MAX_FAILURES: variable(positiveInteger().default(20)),
  CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: variable(positiveInteger().default(100)),
  LOG_LEVEL: variable(
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  ),
  TESSERA_KUBERNETES_NAMESPACE: variable(
    z
      .string()
      .max(63, 'must be at most 63 characters')
      .regex(
        NAMESPACE,
        'must be a namespace name: lower-case letters, digits and hyphens, starting and ending with a letter or digit',
      )
      .optional(),
  ),
  WORKERS: variable(workerCount().default(1)),
})

/**
 * Reads the settings from environment variables (and flags the CLI mapped onto the same names),
 * applying the defaults of `mode`. Throws a {@link ConfigError} listing every bad variable, as
 * `environment: NAME: problem`; values are never repeated in messages.
 *
 * Its one read of the file system: without TESSERA_KUBERNETES_NAMESPACE, the pod's namespace is
 * read from {@link SERVICE_ACCOUNT_NAMESPACE_FILE} when that file exists.
 *
 * @example
 * const settings = parseSettings(process.env, 'start')
 * settings.port // 3000
 * @see docs/settings.md
 */
export function parseSettings(
  vars: Record<string, string | undefined>,
  mode: SettingsMode,
): Settings {
  const input = Object.fromEntries(SETTING_NAMES.map((name) => [name, vars[name]]))
  const parsed = SettingsSchema.safeParse(input, { error: errorMap })
  const issues: ConfigIssue[] = parsed.success
    ? []
    : flattenIssues(parsed.error.issues).map(({ path, message }) => ({
        file: 'environment',
        line: 0,
        path: path.join('.'),
        message,
      }))

  // Checked apart from the schema so that it is reported along with any other bad variable.
  const tokenHours = SettingsSchema.shape.TOKEN_EXPIRATION_IN_HOURS.safeParse(
    input.TOKEN_EXPIRATION_IN_HOURS,
  )
  const graceHours = SettingsSchema.shape.JWKS_GRACE_HOURS.safeParse(input.JWKS_GRACE_HOURS)
  const floor = tokenHours.success ? 2 * tokenHours.data : undefined
  // Retired keys must outlive every token they signed.
  if (
    floor !== undefined &&
    graceHours.success &&
    graceHours.data !== undefined &&
    graceHours.data < floor
  ) {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'JWKS_GRACE_HOURS',
      message: `must be at least 2 × TOKEN_EXPIRATION_IN_HOURS (${floor})`,
    })
  }
  // Two listeners cannot share a port; 0 asks for a free one each.
  const port = SettingsSchema.shape.PORT.safeParse(input.PORT)
  const admin = SettingsSchema.shape.ADMIN_PORT.safeParse(input.ADMIN_PORT)
  if (port.success && admin.success && port.data !== 0 && admin.data === port.data) {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'ADMIN_PORT',
      message: 'must differ from PORT (or be off)',
    })
  }
  // dev listens before it builds its issuer, to name its real port in the issuer URLs: one
  // process only.
  const workers = SettingsSchema.shape.WORKERS.safeParse(input.WORKERS)
  if (mode === 'dev' && workers.success && workers.data !== 1) {
    issues.push({
      file: 'environment',
      line: 0,
      path: 'WORKERS',
      message: 'tessera dev runs one process; workers are for tessera start',
    })
  }
  if (!parsed.success || issues.length > 0) {
    const position = (issue: ConfigIssue) => SETTING_NAMES.indexOf(issue.path as SettingName)
    throw new ConfigError(issues.sort((a, b) => position(a) - position(b)))
  }

  const env = parsed.data
  const settings: Settings = {
    tokenExpirationHours: env.TOKEN_EXPIRATION_IN_HOURS,
    refreshTokenExpirationHours: env.REFRESH_TOKEN_EXPIRATION_IN_HOURS,
    authorizationCodeTtlSeconds: env.AUTHORIZATION_CODE_TTL_SECONDS,
    sessionTtlHours: env.SESSION_TTL_HOURS,
    port: env.PORT,
    host: env.HOST ?? (mode === 'dev' ? '127.0.0.1' : '0.0.0.0'),
    config: env.TESSERA_CONFIG ?? (mode === 'dev' ? './examples' : './config'),
    configSource: env.TESSERA_CONFIG_SOURCE,
    databaseUrl: env.DATABASE_URL,
    databaseMaxConnections: env.DATABASE_MAX_CONNECTIONS,
    keyRotateOnRestart: env.KEY_ROTATE_ON_RESTART,
    keyRotationDays: env.KEY_ROTATION_DAYS,
    keyPublishAheadSeconds: env.KEY_PUBLISH_AHEAD_SECONDS,
    jwksGraceHours: env.JWKS_GRACE_HOURS ?? 2 * env.TOKEN_EXPIRATION_IN_HOURS,
    trustProxy: env.TRUST_PROXY,
    maxBodyBytes: env.MAX_BODY_BYTES,
    providerTimeoutMs: env.PROVIDER_TIMEOUT_MS,
    adminPort: env.ADMIN_PORT,
    adminHost: env.ADMIN_HOST,
    passwordMaxFailures: env.PASSWORD_MAX_FAILURES,
    passwordMaxFailuresPerAddress: env.PASSWORD_MAX_FAILURES_PER_ADDRESS,
    passwordFailureWindowSeconds: env.PASSWORD_FAILURE_WINDOW_SECONDS,
    clientAuthMaxFailures: env.CLIENT_AUTH_MAX_FAILURES,
    clientAuthMaxFailuresPerAddress: env.CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS,
    logLevel: env.LOG_LEVEL,
    kubernetesNamespace:
      env.TESSERA_KUBERNETES_NAMESPACE ?? readServiceAccountNamespace() ?? 'default',
    workers: env.WORKERS === 'auto' ? Math.min(MAX_WORKERS, availableParallelism()) : env.WORKERS,
  }
  if (env.JWT_SECRET !== undefined) settings.jwtSecret = env.JWT_SECRET
  if (env.KEY_ENCRYPTION_SECRET !== undefined)
    settings.keyEncryptionSecret = env.KEY_ENCRYPTION_SECRET
  if (env.ADMIN_TOKEN !== undefined) settings.adminToken = env.ADMIN_TOKEN
  return settings
}

/** The namespace of the pod's service account, when running in a cluster. */
function readServiceAccountNamespace(): string | undefined {
  let text: string
  try {
    text = readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8')
  } catch {
    // Outside a cluster (or without an automounted token): no file, no namespace.
    return undefined
  }
  const namespace = text.trim()
  return NAMESPACE.test(namespace) ? namespace : undefined
}
