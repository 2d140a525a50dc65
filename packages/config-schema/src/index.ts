/**
 * @tessera/config-schema: the tenant configuration (zod schemas, YAML loading, the rules across
 * tenants) and the issuer's settings. Everything downstream sees the normalised {@link Tenant}.
 *
 * Two parse entry points: {@link parseConfig} (tenant documents in, tenants or every issue out)
 * and {@link parseSettings} (environment variables in, settings out, or a `ConfigError` listing
 * every bad variable). {@link loadConfig} reads tenant YAML and applies the same checks.
 *
 * @module
 */
export {
  CLIENT_ASSERTION_ALGORITHMS,
  ConfigError,
  formatConfigIssue,
  GRANT_TYPES,
  JWT_ALGORITHMS,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from './model.js'
export type {
  Client,
  ClientAssertionAlgorithm,
  ClientJwk,
  ConfigIssue,
  DynamicClientOrigin,
  DynamicClientsConfig,
  GrantType,
  IntrospectionScope,
  JwtAlgorithm,
  Resource,
  SourceLocation,
  Tenant,
  TokenEndpointAuthMethod,
} from './model.js'
export {
  ClientSchema,
  RedirectUriSchema,
  TenantFileSchema,
  TenantResourceSchema,
} from './schema.js'
export { DEFAULT_MAX_REGISTRATIONS, DynamicClientsSchema } from './dynamic-clients.js'
export { ClientJwksSchema } from './internal/client-keys.js'
export type { TenantFile, TenantResource } from './schema.js'
export { parseConfig } from './parse-config.js'
export type { ConfigDocument, ParseConfigOptions, ParseConfigResult } from './parse-config.js'
export { cachedFileExists, findConfigFiles, loadConfig, loadConfigFiles } from './load-config.js'
export type { LoadConfigOptions, LoadedConfig } from './load-config.js'
export {
  createConfigIndex,
  parseConfigDocument,
  parseConfigFile,
  readConfigFile,
} from './config-file.js'
export type { ConfigFile, ConfigIndex } from './config-file.js'
export {
  decodeParsedDocuments,
  encodeParsedDocuments,
  parseCacheKey,
  parseYamlDocuments,
} from './parse-cache.js'
export type { ParsedDocument, YamlParseCache } from './parse-cache.js'
export { MAX_WORKERS, parseSettings } from './settings.js'
export { LOG_LEVELS, SETTING_NAMES, SETTINGS, SettingsSchema } from './settings-table.js'
export type { LogLevel, SettingName, Settings } from './settings-table.js'
export type {
  NormalizeContext,
  SettingDefinition,
  SettingDoc,
  SettingsMode,
} from './setting-definition.js'
export { tenantResourceJsonSchema } from './json-schema.js'
export { normaliseHost } from './host.js'
export { normaliseResourceUri } from './resource-uri.js'
