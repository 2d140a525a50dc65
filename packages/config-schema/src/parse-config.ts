/**
 * `parseConfig`: tenant documents in, normalised tenants or every problem out.
 *
 * @module
 */
import { statSync } from 'node:fs'
import type * as z from 'zod'
import { errorMap, flattenIssues } from './internal/issues.js'
import type { FieldPath } from './internal/issues.js'
import { isRecord } from './internal/is-record.js'
import { resolveSpec } from './internal/resolve.js'
import type { ResolvedSpec } from './internal/resolve.js'
import { checkRules, collectFacts } from './internal/rules.js'
import type { TenantFacts } from './internal/rules.js'
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
  const fileExists = options.fileExists ?? isFile
  const issues: (ConfigIssue & { order: number })[] = []
  const tenants: Tenant[] = []
  const facts: TenantFacts[] = []

  documents.forEach((document, order) => {
    const { file } = document
    const locate = document.locate ?? (() => 1)
    const report = (path: FieldPath, message: string) => {
      issues.push({ file, line: locate(path), path: path.join('.'), message, order })
    }
    const { value } = document
    if (!isRecord(value)) {
      report([], 'must be a mapping: a tenant (name, config) or a kind: Tenant resource')
      return
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
    const resolved = resolveSpec(value[specKey], [specKey], {
      file,
      env: options.env,
      fileExists,
      report,
    })
    facts.push(collectFacts(value, resource, { file, locate, report }))
    if (!parsed.success || !resolved.ok) return

    const { name, spec } =
      'metadata' in parsed.data
        ? { name: parsed.data.metadata.name, spec: parsed.data.spec }
        : { name: parsed.data.name, spec: parsed.data.config }
    tenants.push(toTenant(name, spec, resolved, { file, line: locate([]) }))
  })

  checkRules(facts, options.jwtSecret)
  if (issues.length > 0) {
    // Document order, then line order within a document; sort is stable for equal lines.
    issues.sort((a, b) => a.order - b.order || a.line - b.line)
    return { ok: false, issues: issues.map(({ order: _order, ...issue }) => issue) }
  }
  return { ok: true, tenants }
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
      return normalised
    }),
    source,
  }
  if (spec.audience !== undefined) tenant.audience = spec.audience
  if (resolved.jwtSecret !== undefined) tenant.jwtSecret = resolved.jwtSecret
  return tenant
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
}
