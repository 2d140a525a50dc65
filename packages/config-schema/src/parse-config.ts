/**
 * `parseConfig`: tenant documents in, normalised tenants or every problem out.
 *
 * @module
 */
import type { YamlParseCache } from './parse-cache.js'
import { statSync } from 'node:fs'
import type * as z from 'zod'
import { errorMap, flattenIssues } from './internal/issues.js'
import type { FieldPath } from './internal/issues.js'
import { isRecord } from './internal/is-record.js'
import { resolveSpec } from './internal/resolve.js'
import type { ResolvedSpec } from './internal/resolve.js'
import { checkRules, collectFacts, factsOfValid } from './internal/rules.js'
import type { Report, TenantFacts } from './internal/rules.js'
import type { Client, ConfigIssue, Tenant } from './model.js'
import { TenantFileSchema, TenantResourceSchema } from './schema.js'

/** The `config` (or `spec`) of a tenant after the schema: defaults applied, hosts lower-cased. */
type TenantConfig = z.output<typeof TenantFileSchema>['config']

/** One parsed YAML (or JSON) document and where it came from. */
export interface ConfigDocument {
  /**
   * The file as shown in issues (`examples/acme.yaml`); provider paths resolve against its folder
   * (relative to the working directory when the file name is relative).
   */
  file: string
  /** The document's value: a file-form tenant or a `kind: Tenant` resource. */
  value: unknown
  /**
   * Maps a field path (`['config', 'clients', 0, 'client_id']`) to its 1-based line, or the line
   * of the nearest parent that exists. Default: every issue is on line 1.
   */
  locate?: (path: (string | number)[]) => number
}

/** Options of {@link parseConfig} and `loadConfig`. */
export interface ParseConfigOptions {
  /** Where `{env: VAR}` secrets are read from (usually `process.env`). */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting; needed by every HS256 tenant without a `jwt_secret` of its own. */
  jwtSecret: string | undefined
  /**
   * Tells whether a provider script exists (an absolute path). Default: a synchronous `stat` that
   * wants a regular file; the only file-system access of `parseConfig`.
   */
  fileExists?: (absolutePath: string) => boolean
  /**
   * Parse results kept between starts, for `readConfigFile`, `parseConfigFile` and
   * `loadConfigFiles` (see `YamlParseCache`); `parseConfig` takes documents already parsed.
   */
  parseCache?: YamlParseCache
  /**
   * Where a client secret shorter than 16 characters goes instead of being a problem (`tessera
   * dev` warns with it). Unset: such a secret refuses its tenant, like any other problem.
   */
  shortClientSecrets?: (issue: ConfigIssue) => void
}

/** The context of {@link checkDocument} that `options` make. */
export function checkContext(options: ParseConfigOptions): CheckContext {
  return {
    env: options.env,
    fileExists: options.fileExists ?? isFile,
    ...(options.shortClientSecrets === undefined
      ? {}
      : { shortClientSecrets: options.shortClientSecrets }),
  }
}

/** The tenants, or every issue found; never both. */
export type ParseConfigResult =
  { ok: true; tenants: Tenant[] } | { ok: false; issues: ConfigIssue[] }

/**
 * Validates tenant documents (file form or resource form) and normalises them to {@link Tenant}s,
 * or returns every problem found, each with its file, line and dotted field path.
 *
 * The schema runs first, then the checks that need context (provider scripts, `{env: VAR}`
 * secrets), then the rules across documents: tenant names, hosts (port ignored) and client_ids
 * are unique, and an HS256 tenant without its own `jwt_secret` needs a JWT_SECRET of at least 32
 * characters. Nothing stops at the first problem.
 *
 * @example
 * const acme = {
 *   name: 'acme',
 *   config: { hosts: ['acme.localhost'], providers: ['users.provider.mjs'], clients: [] },
 * }
 * const result = parseConfig([{ file: 'tenants/acme.yaml', value: acme }], {
 *   env: process.env,
 *   jwtSecret: process.env.JWT_SECRET,
 * })
 * if (!result.ok) console.error(result.issues.map(formatConfigIssue).join('\n'))
 * @see docs/settings.md (JWT_SECRET)
 */
export function parseConfig(
  documents: readonly ConfigDocument[],
  options: ParseConfigOptions,
): ParseConfigResult {
  const context = checkContext(options)
  const issues: (ConfigIssue & { order: number })[] = []
  const tenants: Tenant[] = []
  const checked: { facts: TenantFacts; report: Report }[] = []

  documents.forEach((document, order) => {
    const { file } = document
    const locate = document.locate ?? (() => 1)
    const report: Report = (path, message) => {
      issues.push({ file, line: locate(path), path: path.join('.'), message, order })
    }
    const result = checkDocument(
      { file, value: document.value, locate, line: () => locate([]) },
      context,
      report,
    )
    if (result === undefined) return
    checked.push({ facts: result.facts, report })
    if (result.tenant !== undefined) tenants.push(result.tenant)
  })

  checkRules(checked, options.jwtSecret)
  if (issues.length > 0) {
    // Document order, then line order within a document; sort is stable for equal lines.
    issues.sort((a, b) => a.order - b.order || a.line - b.line)
    return { ok: false, issues: issues.map(({ order: _order, ...issue }) => issue) }
  }
  return { ok: true, tenants }
}

/** One document to check: where it is, and the line its tenant is said to start on. */
export interface DocumentToCheck {
  file: string
  value: unknown
  locate: (path: FieldPath) => number
  line: () => number
}

/** What `checkDocument` needs besides the document. */
export interface CheckContext {
  env: Record<string, string | undefined>
  fileExists: (absolutePath: string) => boolean
  /** See {@link ParseConfigOptions.shortClientSecrets}. */
  shortClientSecrets?: (issue: ConfigIssue) => void
}

/**
 * The checks of one document alone: the schema, then what needs context (provider scripts,
 * `{env: VAR}` secrets). Answers the facts the rules across documents need and, when nothing was
 * reported, the tenant; undefined for a document that is not even a mapping.
 */
export function checkDocument(
  document: DocumentToCheck,
  context: CheckContext,
  report: Report,
): { facts: TenantFacts; tenant: Tenant | undefined } | undefined {
  const { file, value, locate } = document
  if (!isRecord(value)) {
    report([], 'must be a mapping: a tenant (name, config) or a kind: Tenant resource')
    return undefined
  }

  // The resource form announces itself; anything else is read as the file form, whose
  // unknown-key issue then lists name and config.
  const resource = 'apiVersion' in value || 'kind' in value
  const specKey = resource ? 'spec' : 'config'
  const parsed = resource
    ? TenantResourceSchema.safeParse(value, { error: errorMap })
    : TenantFileSchema.safeParse(value, { error: errorMap })
  if (!parsed.success) {
    for (const issue of flattenIssues(parsed.error.issues)) report(issue.path, issue.message)
  }
  const warn = context.shortClientSecrets
  const resolved = resolveSpec(value[specKey], [specKey], {
    file,
    env: context.env,
    fileExists: context.fileExists,
    report,
    ...(warn === undefined
      ? {}
      : {
          shortClientSecret: (path: FieldPath, message: string) =>
            warn({ file, line: locate(path), path: path.join('.'), message }),
        }),
  })
  if (!parsed.success) {
    return { facts: collectFacts(value, resource, { file, locate }), tenant: undefined }
  }
  const { name, spec } =
    'metadata' in parsed.data
      ? { name: parsed.data.metadata.name, spec: parsed.data.spec }
      : { name: parsed.data.name, spec: parsed.data.config }
  const facts = factsOfValid(
    { name, hosts: spec.hosts, clientIds: spec.clients.map((client) => client.client_id) },
    spec.jwt_algorithm,
    value,
    resource,
    { file, locate },
  )
  if (!resolved.ok) return { facts, tenant: undefined }
  return { facts, tenant: toTenant(name, spec, resolved, { file, line: document.line() }) }
}

function toTenant(
  name: string,
  spec: TenantConfig,
  resolved: ResolvedSpec,
  source: Tenant['source'],
): Tenant {
  const tenant: Tenant = {
    name,
    hosts: spec.hosts,
    jwtAlgorithm: spec.jwt_algorithm,
    providers: resolved.providers,
    clients: spec.clients.map((client, index) => {
      const normalised: Client = {
        clientId: client.client_id,
        grantTypes: client.grant_types,
        redirectUris: client.redirect_uris,
        postLogoutRedirectUris: client.post_logout_redirect_uris,
        scopes: client.scopes,
        introspection: client.introspection,
      }
      const secret = resolved.clientSecrets.get(index)
      if (secret !== undefined) normalised.clientSecret = secret
      if (client.client_name !== undefined) normalised.name = client.client_name
      if (client.allowed_origins !== undefined && client.allowed_origins.length > 0) {
        normalised.allowedOrigins = client.allowed_origins
      }
      if (client.token_endpoint_auth_method !== undefined) {
        normalised.tokenEndpointAuthMethod = client.token_endpoint_auth_method
      }
      if (client.jwks !== undefined) normalised.jwks = client.jwks
      if (client.jwks_uri !== undefined) normalised.jwksUri = client.jwks_uri
      if (client.dpop_bound_access_tokens === true) normalised.dpopBoundAccessTokens = true
      return normalised
    }),
    source,
  }
  if (spec.audience !== undefined) tenant.audience = spec.audience
  if (spec.resources !== undefined && spec.resources.length > 0) {
    tenant.resources = spec.resources.map((resource) =>
      resource.scopes === undefined
        ? { uri: resource.uri }
        : { uri: resource.uri, scopes: resource.scopes },
    )
  }
  if (spec.dpop_nonce === true) tenant.dpopNonce = true
  if (resolved.jwtSecret !== undefined) tenant.jwtSecret = resolved.jwtSecret
  const dynamic = spec.dynamic_clients
  if (dynamic !== undefined && (dynamic.registration || dynamic.metadata_documents)) {
    tenant.dynamicClients = {
      registration: dynamic.registration,
      metadataDocuments: dynamic.metadata_documents,
      scopes: dynamic.scopes ?? [],
      maxRegistrations: dynamic.max_registrations,
      ...(resolved.registrationToken === undefined
        ? {}
        : { registrationToken: resolved.registrationToken }),
    }
  }
  return tenant
}

export function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
}
