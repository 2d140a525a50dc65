/**
 * The issuer's settings, each declared once: its environment variable, its property in
 * {@link Settings}, its value schema and its row of docs/settings.md. The names, the types, the
 * zod schema of the environment and the docs' check are all derived from {@link SETTINGS}.
 *
 * @see docs/settings.md
 *
 * @module
 */
import { availableParallelism } from 'node:os'
import * as z from 'zod'
import { byMode, setting } from './setting-definition.js'
import {
  adminPort,
  adminToken,
  boolean,
  integerBetween,
  MAX_WORKERS,
  namespace,
  positiveInteger,
  positiveNumber,
  proxyCount,
  readServiceAccountNamespace,
  secret,
  variable,
  workerCount,
} from './internal/setting-values.js'

/** Log levels, most to least severe; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * Every setting, keyed by its property in {@link Settings}, in the order of docs/settings.md.
 *
 * @see docs/settings.md
 */
export const SETTINGS = {
  jwtSecret: setting({
    env: 'JWT_SECRET',
    schema: secret().optional(),
    doc: {
      meaning:
        'HS256 signing secret, at least 32 characters. Required by `start` as soon as a tenant ' +
        'uses HS256 without its own `jwt_secret`; `dev` makes up a random one per process, ' +
        'with a warning.',
    },
  }),
  tokenExpirationHours: setting({
    env: 'TOKEN_EXPIRATION_IN_HOURS',
    schema: positiveNumber().default(2),
    doc: { meaning: 'Access-token lifetime in hours (decimals allowed).' },
  }),
  refreshTokenExpirationHours: setting({
    env: 'REFRESH_TOKEN_EXPIRATION_IN_HOURS',
    schema: positiveNumber().default(720),
    doc: { meaning: 'Absolute lifetime of a refresh-token family, from the sign-in.' },
  }),
  authorizationCodeTtlSeconds: setting({
    env: 'AUTHORIZATION_CODE_TTL_SECONDS',
    schema: positiveInteger().default(60),
    doc: { meaning: 'Authorization-code lifetime.' },
  }),
  sessionTtlHours: setting({
    env: 'SESSION_TTL_HOURS',
    schema: positiveNumber().default(8),
    doc: {
      meaning:
        'Lifetime of an OpenID Connect sign-in session (the `tessera_session` cookie that skips ' +
        'the login form), from the sign-in; decimals allowed.',
    },
  }),
  port: setting({
    env: 'PORT',
    schema: integerBetween(0, 65535).default(3000),
    doc: {
      meaning:
        "Port of the tenants' listener; `0` picks a free one (logged). In `dev`, also the port " +
        'of issuer URLs whose host names none: see [PORT and issuer URLs](#port-and-issuer-urls).',
    },
  }),
  host: setting({
    env: 'HOST',
    schema: z.string().optional(),
    normalize: byMode({ start: '0.0.0.0', dev: '127.0.0.1' }),
    doc: { default: '`0.0.0.0` (dev: `127.0.0.1`)', meaning: "Address of the tenants' listener." },
  }),
  config: setting({
    env: 'TESSERA_CONFIG',
    schema: z.string().optional(),
    normalize: byMode({ start: './config', dev: './examples' }),
    doc: {
      flag: '--config',
      default: '`./config` (dev: `./examples`)',
      meaning:
        'A directory (searched recursively) or a file of tenant YAML; with the `kubernetes` ' +
        'source, the directory of the provider scripts.',
    },
  }),
  configSource: setting({
    env: 'TESSERA_CONFIG_SOURCE',
    schema: z
      .enum(['files', 'kubernetes'], { error: 'must be files or kubernetes' })
      .default('files'),
    doc: {
      meaning:
        '`files`, or `kubernetes`: serve the `Tenant` resources of a namespace ' +
        '([kubernetes-source.md](kubernetes-source.md)).',
    },
  }),
  databaseUrl: setting({
    env: 'DATABASE_URL',
    schema: z
      .string()
      .refine((url) => /^(?:sqlite:|memory:|postgres:\/\/|postgresql:\/\/)/.test(url), {
        message: 'must start with sqlite:, memory:, postgres:// or postgresql://',
      })
      .default('sqlite:./data/tessera.db'),
    doc: {
      meaning: '`sqlite:PATH`, `postgres://…` (or `postgresql://…`), `memory:` (tests only).',
    },
  }),
  databaseMaxConnections: setting({
    env: 'DATABASE_MAX_CONNECTIONS',
    schema: integerBetween(1, 1000).default(10),
    doc: {
      meaning:
        'Connections in the PostgreSQL pool of each process (1 to 1000); with `WORKERS` and ' +
        'replicas, each process has its own pool: keep replicas × (workers + 1) × this under ' +
        "the server's `max_connections`. Ignored for SQLite.",
    },
  }),
  keyRotateOnRestart: setting({
    env: 'KEY_ROTATE_ON_RESTART',
    schema: boolean().default(true),
    doc: {
      meaning:
        "A start on a later UTC date than a tenant's newest RS256 key makes a new key, in the " +
        'background: the old key signs until it is stored. `true`, `false`, `1`, `0`, `yes`, `no`.',
    },
  }),
  keyRotationDays: setting({
    env: 'KEY_ROTATION_DAYS',
    schema: positiveNumber().default(90),
    doc: { meaning: 'A running issuer rotates an RS256 key this old.' },
  }),
  keyPublishAheadSeconds: setting({
    env: 'KEY_PUBLISH_AHEAD_SECONDS',
    schema: integerBetween(0, 86_400).default(60),
    doc: {
      meaning:
        'A key made while another signs (restart, age, `keys rotate`, the admin API, a switch ' +
        'from HS256) is published at once and signs this much later; until then the old key ' +
        '(or HS256) signs. 0 to 86400; `0` signs at once. At least the refetch cooldown of the ' +
        'verifiers (30 s in `@tessera/verifier` and jose).',
    },
  }),
  jwksGraceHours: setting({
    env: 'JWKS_GRACE_HOURS',
    schema: positiveNumber().optional(),
    // At least twice the token lifetime (a rule checks a value given), so that a retired key
    // outlives every token it signed.
    normalize: (hours, { tokenExpirationHours }) => hours ?? 2 * tokenExpirationHours,
    doc: {
      default: '2 × `TOKEN_EXPIRATION_IN_HOURS`',
      meaning: 'How long a retired key stays published; a smaller value is refused.',
    },
  }),
  keyEncryptionSecret: setting({
    env: 'KEY_ENCRYPTION_SECRET',
    // HKDF derives the AES key from it, which needs a random secret, not a password: a short
    // one would make weak encryption look strong.
    schema: secret().optional(),
    doc: {
      meaning:
        'At least 32 characters; encrypts private keys at rest (AES-256-GCM), and the parse ' +
        'results of tenant files kept for faster starts ' +
        '([configuration.md](configuration.md#starting-with-many-files)).',
    },
  }),
  trustProxy: setting({
    env: 'TRUST_PROXY',
    schema: proxyCount().default(false),
    doc: {
      meaning:
        '`false` (or `0`), or the number of proxies in front of the issuer (`1`, `2`, …): see ' +
        '[Behind a proxy](#behind-a-proxy). `true` is refused.',
    },
  }),
  fetchAllowPrivateAddresses: setting({
    env: 'FETCH_ALLOW_PRIVATE_ADDRESSES',
    schema: boolean().default(false),
    doc: {
      meaning:
        'Allows client ID metadata documents, and the `jwks_uri` they name, from loopback, ' +
        'private and link-local addresses, and http from loopback ones: for development and ' +
        'tests, never production. `true`, `false`, `1`, `0`, `yes`, `no`. See ' +
        '[dynamic-clients.md](dynamic-clients.md#client-id-metadata-documents).',
    },
  }),
  maxBodyBytes: setting({
    env: 'MAX_BODY_BYTES',
    schema: integerBetween(1, 1_048_576).default(16_384),
    doc: {
      meaning:
        'Largest request body after decoding, 1 to 1048576 bytes; more is 413. See ' +
        '[Request bodies](#request-bodies).',
    },
  }),
  providerTimeoutMs: setting({
    env: 'PROVIDER_TIMEOUT_MS',
    // Node fires a longer timer at once, so the cap keeps a large value from meaning "no time".
    schema: integerBetween(1, 2_147_483_647).default(5000),
    doc: {
      meaning:
        'A provider script that has not answered by then is given up: `/token` answers 503 ' +
        '`temporarily_unavailable` with `Retry-After`, the login form an HTML "try again later" ' +
        'page (503). It also bounds how long a password check waits for those in flight ahead ' +
        'of it ([throttling](throttling.md#checks-in-flight)).',
    },
  }),
  adminPort: setting({
    env: 'ADMIN_PORT',
    schema: adminPort().default(9464),
    doc: {
      meaning:
        'Port of the admin listener (`/metrics`, `/healthz`, `/readyz`); `0` picks a free one ' +
        '(logged), `off` opens none. Must differ from `PORT`. See ' +
        '[The admin listener](#the-admin-listener).',
    },
  }),
  adminHost: setting({
    env: 'ADMIN_HOST',
    schema: z.string().default('127.0.0.1'),
    doc: { meaning: 'Address of the admin listener.' },
  }),
  adminToken: setting({
    env: 'ADMIN_TOKEN',
    schema: adminToken().optional(),
    doc: {
      meaning:
        'At least 32 characters (`openssl rand -base64 32`): enables the admin API (`/admin/*`, ' +
        '`Authorization: Bearer`). Unset: 404. See [admin-api.md](admin-api.md).',
    },
  }),
  passwordMaxFailures: setting({
    env: 'PASSWORD_MAX_FAILURES',
    schema: positiveInteger().default(5),
    doc: {
      meaning:
        'Failed password checks allowed per tenant and username within the window, then 429; ' +
        'also the most checks of one user in flight at once (others wait their turn).',
    },
  }),
  passwordMaxFailuresPerAddress: setting({
    env: 'PASSWORD_MAX_FAILURES_PER_ADDRESS',
    schema: positiveInteger().default(50),
    doc: {
      meaning:
        'Failed password checks allowed per client address within the window, across ' +
        'usernames, then 429.',
    },
  }),
  passwordFailureWindowSeconds: setting({
    env: 'PASSWORD_FAILURE_WINDOW_SECONDS',
    schema: positiveInteger().default(900),
    doc: {
      meaning: 'The window of both failure counts, and of the client-authentication counts.',
    },
  }),
  clientAuthMaxFailures: setting({
    env: 'CLIENT_AUTH_MAX_FAILURES',
    schema: positiveInteger().default(20),
    doc: {
      meaning:
        'Failed client authentications (wrong secret, bad client assertion, unknown ' +
        '`client_id`) at `/token`, `/revoke` and `/introspect` allowed per `client_id` and ' +
        'address within the window, then 429 ([throttling.md](throttling.md)).',
    },
  }),
  clientAuthMaxFailuresPerAddress: setting({
    env: 'CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS',
    schema: positiveInteger().default(100),
    doc: {
      meaning:
        'Failed client authentications allowed per address within the window, across ' +
        '`client_id`s and tenants, then 429.',
    },
  }),
  logLevel: setting({
    env: 'LOG_LEVEL',
    schema: z
      .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
      .default('info'),
    doc: {
      meaning:
        '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines ' +
        '(`dev` on a terminal: coloured lines); no body, header, password, secret or token is ' +
        'logged.',
    },
  }),
  kubernetesNamespace: setting({
    env: 'TESSERA_KUBERNETES_NAMESPACE',
    schema: namespace().optional(),
    // Read only when unset: the one read of the file system while parsing settings.
    normalize: (name) => name ?? readServiceAccountNamespace() ?? 'default',
    doc: {
      default: "the pod's own namespace, else `default`",
      meaning: 'Whose `Tenant` resources the `kubernetes` source serves.',
    },
  }),
  workers: setting({
    env: 'WORKERS',
    schema: workerCount().default(1),
    normalize: (count) =>
      count === 'auto' ? Math.min(MAX_WORKERS, availableParallelism()) : count,
    doc: {
      meaning:
        "`tessera start` only: how many processes serve the tenants' port, 1 to 64, or `auto` " +
        "(the machine's available parallelism). `dev` refuses more than 1. See [Workers](#workers).",
    },
  }),
}

type Table = typeof SETTINGS

/** The environment variables, each also a CLI flag: `JWT_SECRET` ↔ `--jwt-secret`. */
export type SettingName = Table[keyof Table]['env']

/**
 * The environment variables `parseSettings` reads, in the order of docs/settings.md. The CLI
 * maps each to a flag: `JWT_SECRET` ↔ `--jwt-secret`.
 *
 * @see docs/settings.md
 */
export const SETTING_NAMES: readonly SettingName[] = Object.values(SETTINGS).map(({ env }) => env)

/** The settings as read, before `normalize`: mode-dependent values still undefined. */
export type WrittenSettings = { [Key in keyof Table]: z.output<Table[Key]['schema']> }

type Values = { [Key in keyof Table]: ReturnType<Table[Key]['normalize']> }
type OptionalKey = {
  [Key in keyof Values]-?: undefined extends Values[Key] ? Key : never
}[keyof Values]
type Flatten<T> = { [Key in keyof T]: T[Key] }

/**
 * The issuer's settings, parsed and with defaults applied: the properties of {@link SETTINGS},
 * those without a default optional.
 *
 * @see docs/settings.md
 */
export type Settings = Flatten<
  { [Key in Exclude<keyof Values, OptionalKey>]: Values[Key] } & {
    [Key in OptionalKey]?: Exclude<Values[Key], undefined>
  }
>

/** A variable's schema: its text (or undefined) in, its value as read out. */
type VariableSchema<Value = unknown> = z.ZodType<Value, string | undefined>

type EnvironmentShape = {
  [Key in keyof Table as Table[Key]['env']]: VariableSchema<z.output<Table[Key]['schema']>>
}

/**
 * The settings variables, keyed by their environment names (unknown variables are ignored, so
 * `process.env` can be passed as is). Mode-dependent values (HOST, TESSERA_CONFIG) and
 * JWKS_GRACE_HOURS stay undefined when unset: `parseSettings` fills them in.
 *
 * @see docs/settings.md
 */
export const SettingsSchema = z.object(environmentShape())

function environmentShape(): EnvironmentShape {
  const shape: Partial<Record<SettingName, VariableSchema>> = {}
  for (const { env, schema } of Object.values(SETTINGS)) shape[env] = variable(schema)
  return shape as EnvironmentShape
}
