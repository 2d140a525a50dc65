import { describe, expect, expectTypeOf, it } from 'vitest'
import * as api from './index.js'
import type {
  Client,
  ConfigDocument,
  ConfigIssue,
  GrantType,
  JwtAlgorithm,
  ParseConfigOptions,
  ParseConfigResult,
  Settings,
  SettingName,
  SettingsMode,
  Tenant,
  TenantFile,
  TenantResource,
} from './index.js'

describe('@tessera/config-schema', () => {
  it('exports exactly its public API', () => {
    expect(Object.keys(api).sort()).toEqual([
      'CLIENT_ASSERTION_ALGORITHMS',
      'ClientJwksSchema',
      'ClientSchema',
      'ConfigError',
      'DEFAULT_MAX_REGISTRATIONS',
      'DynamicClientsSchema',
      'GRANT_TYPES',
      'JWT_ALGORITHMS',
      'LOG_LEVELS',
      'MAX_WORKERS',
      'RedirectUriSchema',
      'SETTINGS',
      'SETTING_NAMES',
      'SettingsSchema',
      'TOKEN_ENDPOINT_AUTH_METHODS',
      'TenantFileSchema',
      'TenantResourceSchema',
      'cachedFileExists',
      'createConfigIndex',
      'decodeParsedDocuments',
      'encodeParsedDocuments',
      'findConfigFiles',
      'formatConfigIssue',
      'loadConfig',
      'loadConfigFiles',
      'normaliseHost',
      'normaliseResourceUri',
      'parseCacheKey',
      'parseConfig',
      'parseConfigDocument',
      'parseConfigFile',
      'parseSettings',
      'parseYamlDocuments',
      'readConfigFile',
      'tenantResourceJsonSchema',
    ])
  })

  it('types the entry points', () => {
    expectTypeOf(api.parseConfig).parameters.toEqualTypeOf<
      [readonly ConfigDocument[], ParseConfigOptions]
    >()
    expectTypeOf(api.parseConfig).returns.toEqualTypeOf<ParseConfigResult>()
    expectTypeOf(api.loadConfig).returns.toEqualTypeOf<Promise<Tenant[]>>()
    expectTypeOf(api.parseSettings).parameters.toEqualTypeOf<
      [Record<string, string | undefined>, SettingsMode]
    >()
    expectTypeOf(api.parseSettings).returns.toEqualTypeOf<Settings>()
    expectTypeOf(api.normaliseHost).toEqualTypeOf<(host: string) => string>()
    expectTypeOf<ParseConfigOptions>().toMatchTypeOf<{
      env: Record<string, string | undefined>
      jwtSecret: string | undefined
    }>()
    expectTypeOf<ConfigDocument['locate']>().toEqualTypeOf<
      ((path: (string | number)[]) => number) | undefined
    >()
    expectTypeOf(api.ConfigError.prototype.issues).toEqualTypeOf<ConfigIssue[]>()
  })

  it('types the model', () => {
    expectTypeOf<Tenant['jwtAlgorithm']>().toEqualTypeOf<JwtAlgorithm>()
    expectTypeOf<Client['grantTypes']>().toEqualTypeOf<GrantType[]>()
    expectTypeOf<GrantType>().toEqualTypeOf<
      'authorization_code' | 'refresh_token' | 'password' | 'client_credentials'
    >()
    expectTypeOf<SettingName>().toEqualTypeOf<(typeof api.SETTING_NAMES)[number]>()
    expectTypeOf<Settings['configSource']>().toEqualTypeOf<'files' | 'kubernetes'>()
  })

  it('types the wire forms as written, defaults optional', () => {
    expectTypeOf<TenantFile['config']['jwt_algorithm']>().toEqualTypeOf<
      'HS256' | 'RS256' | undefined
    >()
    expectTypeOf<TenantResource['apiVersion']>().toEqualTypeOf<'tessera.dev/v1'>()
    expectTypeOf<TenantFile['config']['jwt_secret']>().toEqualTypeOf<
      string | { env: string } | undefined
    >()
  })
})
