import type * as NodeFs from 'node:fs'
import { availableParallelism } from 'node:os'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, formatConfigIssue } from './model.js'
import { MAX_WORKERS, parseSettings, SERVICE_ACCOUNT_NAMESPACE_FILE } from './settings.js'
import { SETTING_NAMES, SettingsSchema } from './settings-table.js'
import type { SettingsMode } from './setting-definition.js'
import type { Settings } from './settings-table.js'

// The service-account namespace file exists only in a pod: each test says whether it does, so
// that the defaults do not depend on where the tests run.
const serviceAccount = vi.hoisted(() => ({
  file: '',
  content: undefined as string | undefined,
  reads: 0,
}))
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>()
  const readFileSync = ((path: unknown, ...rest: unknown[]) => {
    if (path !== serviceAccount.file)
      return (fs.readFileSync as (...a: unknown[]) => unknown)(path, ...rest)
    serviceAccount.reads++
    if (serviceAccount.content === undefined) {
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), {
        code: 'ENOENT',
      })
    }
    return serviceAccount.content
  }) as typeof fs.readFileSync
  return { ...fs, readFileSync, default: { ...fs, readFileSync } }
})

const ADMIN_TOKEN_MESSAGE =
  'must be letters, digits and - . _ ~ + / (then = padding only), as a bearer token is sent (RFC 6750 §2.1); e.g. openssl rand -base64 32'

beforeEach(() => {
  serviceAccount.file = SERVICE_ACCOUNT_NAMESPACE_FILE
  serviceAccount.content = undefined
  serviceAccount.reads = 0
})

const START_DEFAULTS: Settings = {
  tokenExpirationHours: 2,
  refreshTokenExpirationHours: 720,
  authorizationCodeTtlSeconds: 60,
  sessionTtlHours: 8,
  port: 3000,
  host: '0.0.0.0',
  config: './config',
  configSource: 'files',
  databaseUrl: 'sqlite:./data/tessera.db',
  databaseMaxConnections: 10,
  keyRotateOnRestart: true,
  keyRotationDays: 90,
  keyPublishAheadSeconds: 60,
  jwksGraceHours: 4,
  trustProxy: false,
  fetchAllowPrivateAddresses: false,
  maxBodyBytes: 16_384,
  providerTimeoutMs: 5000,
  adminPort: 9464,
  adminHost: '127.0.0.1',
  passwordMaxFailures: 5,
  passwordMaxFailuresPerAddress: 50,
  passwordFailureWindowSeconds: 900,
  clientAuthMaxFailures: 20,
  clientAuthMaxFailuresPerAddress: 100,
  dpopProofMaxAgeSeconds: 60,
  logLevel: 'info',
  kubernetesNamespace: 'default',
  workers: 1,
}

const WORKERS_MESSAGE = `must be auto or an integer between 1 and ${MAX_WORKERS}`

const NAMESPACE_MESSAGE =
  'must be a namespace name: lower-case letters, digits and hyphens, starting and ending with a letter or digit'

/** The issues of `vars`, formatted. */
function issues(vars: Record<string, string | undefined>, mode: SettingsMode = 'start'): string[] {
  try {
    parseSettings(vars, mode)
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue)
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('parseSettings', () => {
  it('applies the start defaults', () => {
    expect(parseSettings({}, 'start')).toEqual(START_DEFAULTS)
  })

  it('applies the dev defaults: loopback and the examples', () => {
    expect(parseSettings({}, 'dev')).toEqual({
      ...START_DEFAULTS,
      host: '127.0.0.1',
      config: './examples',
    })
  })

  it('reads every variable', () => {
    const vars = {
      JWT_SECRET: 'j'.repeat(32),
      TOKEN_EXPIRATION_IN_HOURS: '0.5',
      REFRESH_TOKEN_EXPIRATION_IN_HOURS: '24',
      AUTHORIZATION_CODE_TTL_SECONDS: '30',
      SESSION_TTL_HOURS: '12',
      PORT: '0',
      HOST: '::',
      TESSERA_CONFIG: '/etc/tessera',
      TESSERA_CONFIG_SOURCE: 'kubernetes',
      DATABASE_URL: 'postgres://tessera@db/tessera',
      DATABASE_MAX_CONNECTIONS: '25',
      KEY_ROTATE_ON_RESTART: 'no',
      KEY_ROTATION_DAYS: '30',
      KEY_PUBLISH_AHEAD_SECONDS: '0',
      JWKS_GRACE_HOURS: '1',
      KEY_ENCRYPTION_SECRET: 'k'.repeat(40),
      TRUST_PROXY: '2',
      FETCH_ALLOW_PRIVATE_ADDRESSES: 'yes',
      MAX_BODY_BYTES: '1048576',
      PROVIDER_TIMEOUT_MS: '250',
      ADMIN_PORT: '0',
      ADMIN_HOST: '0.0.0.0',
      ADMIN_TOKEN: 'a'.repeat(43) + '=',
      PASSWORD_MAX_FAILURES: '3',
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '20',
      PASSWORD_FAILURE_WINDOW_SECONDS: '60',
      CLIENT_AUTH_MAX_FAILURES: '7',
      CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: '30',
      DPOP_PROOF_MAX_AGE_SECONDS: '120',
      LOG_LEVEL: 'debug',
      TESSERA_KUBERNETES_NAMESPACE: 'tessera-prod',
      WORKERS: '1',
    }
    expect(Object.keys(vars)).toEqual([...SETTING_NAMES])
    expect(parseSettings(vars, 'dev')).toEqual({
      jwtSecret: 'j'.repeat(32),
      tokenExpirationHours: 0.5,
      refreshTokenExpirationHours: 24,
      authorizationCodeTtlSeconds: 30,
      sessionTtlHours: 12,
      port: 0,
      host: '::',
      config: '/etc/tessera',
      configSource: 'kubernetes',
      databaseUrl: 'postgres://tessera@db/tessera',
      databaseMaxConnections: 25,
      keyRotateOnRestart: false,
      keyRotationDays: 30,
      keyPublishAheadSeconds: 0,
      jwksGraceHours: 1,
      keyEncryptionSecret: 'k'.repeat(40),
      trustProxy: 2,
      fetchAllowPrivateAddresses: true,
      maxBodyBytes: 1_048_576,
      providerTimeoutMs: 250,
      adminPort: 0,
      adminHost: '0.0.0.0',
      adminToken: 'a'.repeat(43) + '=',
      passwordMaxFailures: 3,
      passwordMaxFailuresPerAddress: 20,
      passwordFailureWindowSeconds: 60,
      clientAuthMaxFailures: 7,
      clientAuthMaxFailuresPerAddress: 30,
      dpopProofMaxAgeSeconds: 120,
      logLevel: 'debug',
      kubernetesNamespace: 'tessera-prod',
      workers: 1,
    })
  })

  it('treats empty values as unset and ignores unknown variables', () => {
    const empty = Object.fromEntries(SETTING_NAMES.map((name) => [name, '']))
    expect(parseSettings({ ...empty, PATH: '/usr/bin', HOME: '/root' }, 'start')).toEqual(
      START_DEFAULTS,
    )
  })

  it.each(['true', 'TRUE', '1', 'yes', 'Yes'])('reads %j as true', (value) => {
    expect(parseSettings({ KEY_ROTATE_ON_RESTART: value }, 'start').keyRotateOnRestart).toBe(true)
  })

  it.each([
    ['false', false],
    ['FALSE', false],
    ['0', false],
    ['1', 1],
    ['2', 2],
    ['10', 10],
  ] as const)('reads TRUST_PROXY=%j as %j', (value, expected) => {
    expect(parseSettings({ TRUST_PROXY: value }, 'start').trustProxy).toBe(expected)
  })

  it.each(['true', 'TRUE', 'yes', 'on'])(
    'refuses TRUST_PROXY=%j, naming the number of proxies instead',
    (value) => {
      expect(issues({ TRUST_PROXY: value })).toEqual([
        'environment: TRUST_PROXY: must be false or the number of proxies in front (1, 2, …); true is no longer accepted: give the number of proxies that append to X-Forwarded-For, e.g. TRUST_PROXY=1',
      ])
    },
  )

  it('reads ADMIN_TOKEN, a bearer token of 32 characters or more; unset by default', () => {
    expect(parseSettings({}, 'start').adminToken).toBeUndefined()
    expect(parseSettings({ ADMIN_TOKEN: '' }, 'start').adminToken).toBeUndefined()
    const token = 'aZ09-._~+/'.repeat(4) + '=='
    expect(parseSettings({ ADMIN_TOKEN: token }, 'start').adminToken).toBe(token)
  })

  it('never repeats a refused ADMIN_TOKEN in its message', () => {
    const token = 'secret value with spaces in it, long enough'
    const [message] = issues({ ADMIN_TOKEN: token })
    expect(message).toBe(`environment: ADMIN_TOKEN: ${ADMIN_TOKEN_MESSAGE}`)
    expect(message).not.toContain('secret value')
  })

  it('reads ADMIN_PORT as a port, 0 or off, on ADMIN_HOST', () => {
    expect(parseSettings({ ADMIN_PORT: 'off' }, 'start').adminPort).toBe('off')
    expect(parseSettings({ ADMIN_PORT: 'OFF' }, 'dev').adminPort).toBe('off')
    expect(parseSettings({ ADMIN_PORT: '0' }, 'start').adminPort).toBe(0)
    expect(parseSettings({ ADMIN_PORT: '9100', ADMIN_HOST: '::' }, 'start')).toMatchObject({
      adminPort: 9100,
      adminHost: '::',
    })
    // Both listeners on a free port each.
    expect(parseSettings({ PORT: '0', ADMIN_PORT: '0' }, 'start').adminPort).toBe(0)
  })

  it('refuses an ADMIN_PORT equal to PORT', () => {
    expect(issues({ PORT: '8080', ADMIN_PORT: '8080' })).toEqual([
      'environment: ADMIN_PORT: must differ from PORT (or be off)',
    ])
    expect(issues({ ADMIN_PORT: '3000' })).toEqual([
      'environment: ADMIN_PORT: must differ from PORT (or be off)',
    ])
  })

  it.each(['false', 'False', '0', 'no', 'NO'])('reads %j as false', (value) => {
    expect(parseSettings({ KEY_ROTATE_ON_RESTART: value }, 'start').keyRotateOnRestart).toBe(false)
  })

  it('accepts every database URL scheme it knows', () => {
    for (const url of ['sqlite:/var/lib/tessera.db', 'memory:', 'postgresql://u:p@h:5432/d']) {
      expect(parseSettings({ DATABASE_URL: url }, 'start').databaseUrl).toBe(url)
    }
  })

  it('reads DATABASE_MAX_CONNECTIONS, 1 to 1000; 10 by default, also in dev', () => {
    expect(parseSettings({}, 'dev').databaseMaxConnections).toBe(10)
    expect(parseSettings({ DATABASE_MAX_CONNECTIONS: '' }, 'start').databaseMaxConnections).toBe(10)
    expect(parseSettings({ DATABASE_MAX_CONNECTIONS: '1' }, 'start').databaseMaxConnections).toBe(1)
    expect(
      parseSettings({ DATABASE_MAX_CONNECTIONS: '1000' }, 'start').databaseMaxConnections,
    ).toBe(1000)
  })

  it('reads SESSION_TTL_HOURS in hours, decimals allowed; 8 by default, also in dev', () => {
    expect(parseSettings({}, 'dev').sessionTtlHours).toBe(8)
    expect(parseSettings({ SESSION_TTL_HOURS: '' }, 'start').sessionTtlHours).toBe(8)
    expect(parseSettings({ SESSION_TTL_HOURS: '0.25' }, 'start').sessionTtlHours).toBe(0.25)
    expect(parseSettings({ SESSION_TTL_HOURS: '.5' }, 'start').sessionTtlHours).toBe(0.5)
    expect(parseSettings({ SESSION_TTL_HOURS: '168' }, 'start').sessionTtlHours).toBe(168)
    // As long as the other hour settings may be: up to the largest exact integer.
    expect(parseSettings({ SESSION_TTL_HOURS: '9007199254740991' }, 'start').sessionTtlHours).toBe(
      Number.MAX_SAFE_INTEGER,
    )
  })

  it('defaults JWKS_GRACE_HOURS to twice the token lifetime', () => {
    expect(parseSettings({ TOKEN_EXPIRATION_IN_HOURS: '1.5' }, 'start').jwksGraceHours).toBe(3)
    expect(
      parseSettings({ TOKEN_EXPIRATION_IN_HOURS: '1.5', JWKS_GRACE_HOURS: '3' }, 'start')
        .jwksGraceHours,
    ).toBe(3)
  })

  it('refuses JWKS_GRACE_HOURS below twice the token lifetime', () => {
    expect(issues({ JWKS_GRACE_HOURS: '3' })).toEqual([
      'environment: JWKS_GRACE_HOURS: must be at least 2 × TOKEN_EXPIRATION_IN_HOURS (4)',
    ])
    expect(issues({ TOKEN_EXPIRATION_IN_HOURS: '12', JWKS_GRACE_HOURS: '23.5' })).toEqual([
      'environment: JWKS_GRACE_HOURS: must be at least 2 × TOKEN_EXPIRATION_IN_HOURS (24)',
    ])
  })

  it('refuses a JWT_SECRET of 31 characters without showing it', () => {
    const secret = 'thirty-one-characters-secret-00'
    expect(secret).toHaveLength(31)
    let thrown: unknown
    try {
      parseSettings({ JWT_SECRET: secret }, 'dev')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    const error = thrown as ConfigError
    expect(error.message).toBe('environment: JWT_SECRET: must be at least 32 characters')
    expect(JSON.stringify(error.issues)).not.toContain(secret)
    expect(String(error.stack)).not.toContain(secret)
  })

  it('refuses a KEY_ENCRYPTION_SECRET of 31 characters along with the other problems, without showing it', () => {
    const secret = 'k'.repeat(31)
    const found = issues({ KEY_ENCRYPTION_SECRET: secret, PORT: 'http' })
    expect(found).toEqual([
      'environment: PORT: must be an integer between 0 and 65535',
      'environment: KEY_ENCRYPTION_SECRET: must be at least 32 characters',
    ])
    expect(found.join('\n')).not.toContain(secret)
    expect(
      parseSettings({ KEY_ENCRYPTION_SECRET: 'k'.repeat(32) }, 'start').keyEncryptionSecret,
    ).toBe('k'.repeat(32))
  })

  it.each([
    ['TOKEN_EXPIRATION_IN_HOURS', '0', 'must be a positive number'],
    ['TOKEN_EXPIRATION_IN_HOURS', '-1', 'must be a positive number'],
    ['TOKEN_EXPIRATION_IN_HOURS', 'two', 'must be a positive number'],
    ['TOKEN_EXPIRATION_IN_HOURS', '1e3', 'must be a positive number'],
    ['REFRESH_TOKEN_EXPIRATION_IN_HOURS', ' 720', 'must be a positive number'],
    ['AUTHORIZATION_CODE_TTL_SECONDS', '1.5', 'must be a positive integer'],
    ['SESSION_TTL_HOURS', '0', 'must be a positive number'],
    ['SESSION_TTL_HOURS', '0.0', 'must be a positive number'],
    ['SESSION_TTL_HOURS', '-8', 'must be a positive number'],
    ['SESSION_TTL_HOURS', 'eight', 'must be a positive number'],
    ['SESSION_TTL_HOURS', '8h', 'must be a positive number'],
    ['SESSION_TTL_HOURS', '1e2', 'must be a positive number'],
    ['SESSION_TTL_HOURS', 'Infinity', 'must be a positive number'],
    ['SESSION_TTL_HOURS', ' 8', 'must be a positive number'],
    ['SESSION_TTL_HOURS', '9007199254740993', 'must be a positive number'],
    ['AUTHORIZATION_CODE_TTL_SECONDS', '0', 'must be a positive integer'],
    ['PORT', '65536', 'must be an integer between 0 and 65535'],
    ['PORT', 'http', 'must be an integer between 0 and 65535'],
    ['TESSERA_CONFIG_SOURCE', 'etcd', 'must be files or kubernetes'],
    [
      'DATABASE_URL',
      'mysql://db/tessera',
      'must start with sqlite:, memory:, postgres:// or postgresql://',
    ],
    ['DATABASE_MAX_CONNECTIONS', '0', 'must be an integer between 1 and 1000'],
    ['DATABASE_MAX_CONNECTIONS', '1001', 'must be an integer between 1 and 1000'],
    ['DATABASE_MAX_CONNECTIONS', 'ten', 'must be an integer between 1 and 1000'],
    ['DATABASE_MAX_CONNECTIONS', '1.5', 'must be an integer between 1 and 1000'],
    ['DATABASE_MAX_CONNECTIONS', '-1', 'must be an integer between 1 and 1000'],
    ['KEY_ROTATE_ON_RESTART', 'maybe', 'must be one of true, false, 1, 0, yes, no'],
    ['KEY_ROTATION_DAYS', '0', 'must be a positive number'],
    ['JWKS_GRACE_HOURS', '-4', 'must be a positive number'],
    ['TRUST_PROXY', 'no', 'must be false or the number of proxies in front (1, 2, …)'],
    ['TRUST_PROXY', '-1', 'must be false or the number of proxies in front (1, 2, …)'],
    ['TRUST_PROXY', '1.5', 'must be false or the number of proxies in front (1, 2, …)'],
    ['TRUST_PROXY', 'loopback', 'must be false or the number of proxies in front (1, 2, …)'],
    ['FETCH_ALLOW_PRIVATE_ADDRESSES', 'on', 'must be one of true, false, 1, 0, yes, no'],
    ['MAX_BODY_BYTES', '0', 'must be an integer between 1 and 1048576'],
    ['KEY_PUBLISH_AHEAD_SECONDS', '-1', 'must be an integer between 0 and 86400'],
    ['KEY_PUBLISH_AHEAD_SECONDS', '1.5', 'must be an integer between 0 and 86400'],
    ['MAX_BODY_BYTES', '1048577', 'must be an integer between 1 and 1048576'],
    ['PROVIDER_TIMEOUT_MS', '0', 'must be an integer between 1 and 2147483647'],
    ['PROVIDER_TIMEOUT_MS', '1.5', 'must be an integer between 1 and 2147483647'],
    ['PROVIDER_TIMEOUT_MS', '5s', 'must be an integer between 1 and 2147483647'],
    ['PROVIDER_TIMEOUT_MS', '2147483648', 'must be an integer between 1 and 2147483647'],
    ['ADMIN_PORT', '65536', 'must be off or an integer between 0 and 65535'],
    ['ADMIN_PORT', 'none', 'must be off or an integer between 0 and 65535'],
    ['ADMIN_PORT', '-1', 'must be off or an integer between 0 and 65535'],
    ['KEY_ENCRYPTION_SECRET', 'k'.repeat(31), 'must be at least 32 characters'],
    ['ADMIN_TOKEN', 'short-admin-token', 'must be at least 32 characters'],
    ['ADMIN_TOKEN', 'a'.repeat(31), 'must be at least 32 characters'],
    ['ADMIN_TOKEN', `${'a'.repeat(32)}\n`, ADMIN_TOKEN_MESSAGE],
    ['ADMIN_TOKEN', `${'a'.repeat(16)} ${'b'.repeat(16)}`, ADMIN_TOKEN_MESSAGE],
    ['ADMIN_TOKEN', `${'a'.repeat(16)}=${'b'.repeat(16)}`, ADMIN_TOKEN_MESSAGE],
    ['ADMIN_TOKEN', 'é'.repeat(32), ADMIN_TOKEN_MESSAGE],
    ['PASSWORD_MAX_FAILURES', '0', 'must be a positive integer'],
    ['PASSWORD_MAX_FAILURES_PER_ADDRESS', '2.5', 'must be a positive integer'],
    ['PASSWORD_FAILURE_WINDOW_SECONDS', '15m', 'must be a positive integer'],
    ['CLIENT_AUTH_MAX_FAILURES', '0', 'must be a positive integer'],
    ['CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS', '-1', 'must be a positive integer'],
    ['DPOP_PROOF_MAX_AGE_SECONDS', '0', 'must be a positive integer'],
    ['LOG_LEVEL', 'verbose', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    ['TESSERA_KUBERNETES_NAMESPACE', 'Tessera', NAMESPACE_MESSAGE],
    ['TESSERA_KUBERNETES_NAMESPACE', 'tessera.prod', NAMESPACE_MESSAGE],
    ['TESSERA_KUBERNETES_NAMESPACE', '-tessera', NAMESPACE_MESSAGE],
    ['TESSERA_KUBERNETES_NAMESPACE', 'n'.repeat(64), 'must be at most 63 characters'],
    ['WORKERS', '0', WORKERS_MESSAGE],
    ['WORKERS', '-2', WORKERS_MESSAGE],
    ['WORKERS', '1.5', WORKERS_MESSAGE],
    ['WORKERS', 'many', WORKERS_MESSAGE],
    ['WORKERS', '65', WORKERS_MESSAGE],
  ])('refuses %s=%j', (name, value, message) => {
    expect(issues({ [name]: value })).toEqual([`environment: ${name}: ${message}`])
  })

  it('reports every bad variable at once, in the order of SETTING_NAMES', () => {
    expect(
      issues({
        LOG_LEVEL: 'loud',
        PORT: '-1',
        JWT_SECRET: 'short',
        TOKEN_EXPIRATION_IN_HOURS: '3',
        SESSION_TTL_HOURS: '0',
        JWKS_GRACE_HOURS: '5',
      }),
    ).toEqual([
      'environment: JWT_SECRET: must be at least 32 characters',
      'environment: SESSION_TTL_HOURS: must be a positive number',
      'environment: PORT: must be an integer between 0 and 65535',
      'environment: JWKS_GRACE_HOURS: must be at least 2 × TOKEN_EXPIRATION_IN_HOURS (6)',
      'environment: LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
    ])
  })
})

describe('parseSettings: WORKERS', () => {
  it('takes a count up to MAX_WORKERS, and auto as the available parallelism', () => {
    expect(parseSettings({ WORKERS: '4' }, 'start').workers).toBe(4)
    expect(parseSettings({ WORKERS: String(MAX_WORKERS) }, 'start').workers).toBe(MAX_WORKERS)
    expect(parseSettings({ WORKERS: 'auto' }, 'start').workers).toBe(
      Math.min(MAX_WORKERS, availableParallelism()),
    )
    expect(parseSettings({ WORKERS: ' Auto ' }, 'start').workers).toBe(
      Math.min(MAX_WORKERS, availableParallelism()),
    )
  })

  it('refuses more than one worker in dev, which runs one process', () => {
    expect(parseSettings({ WORKERS: '1' }, 'dev').workers).toBe(1)
    for (const value of ['2', 'auto']) {
      // auto on a one-core machine is 1, and still refused: the value, not the machine, decides.
      expect(issues({ WORKERS: value }, 'dev')).toEqual([
        'environment: WORKERS: tessera dev runs one process; workers are for tessera start',
      ])
    }
  })
})

describe('parseSettings: TESSERA_KUBERNETES_NAMESPACE', () => {
  it('defaults to the namespace of the pod, from the service-account file', () => {
    serviceAccount.content = 'tessera-staging\n'
    expect(parseSettings({}, 'start').kubernetesNamespace).toBe('tessera-staging')
  })

  it('prefers the variable (or flag) to the service-account file', () => {
    serviceAccount.content = 'tessera-staging'
    expect(
      parseSettings({ TESSERA_KUBERNETES_NAMESPACE: 'tenants' }, 'start').kubernetesNamespace,
    ).toBe('tenants')
  })

  it('falls back to default outside a cluster or when the file holds no namespace name', () => {
    expect(parseSettings({}, 'dev').kubernetesNamespace).toBe('default')
    serviceAccount.content = '  \n'
    expect(parseSettings({}, 'dev').kubernetesNamespace).toBe('default')
    serviceAccount.content = 'Not/A/Namespace'
    expect(parseSettings({}, 'dev').kubernetesNamespace).toBe('default')
  })

  it('reads the file only when the variable is unset', () => {
    serviceAccount.content = 'tessera-staging'
    parseSettings({ TESSERA_KUBERNETES_NAMESPACE: 'tenants' }, 'start')
    expect(serviceAccount.reads).toBe(0)
    parseSettings({}, 'start')
    expect(serviceAccount.reads).toBe(1)
  })
})

describe('SettingsSchema', () => {
  it('parses process.env-like objects, leaving mode-dependent values unset', () => {
    const parsed = SettingsSchema.parse({ PORT: '8080', HOME: '/root' })
    expect(parsed.PORT).toBe(8080)
    expect(parsed.HOST).toBeUndefined()
    expect(parsed.JWKS_GRACE_HOURS).toBeUndefined()
    expect(parsed).not.toHaveProperty('HOME')
  })
})
