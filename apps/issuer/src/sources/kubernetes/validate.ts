/**
 * Validation of one Tenant resource: config-schema's rules on the resource alone, then against
 * the tenants already served, with `spec.providers` confined to the provider directory.
 *
 * @module
 */
import { isAbsolute, relative, resolve } from 'node:path'
import { statSync } from 'node:fs'
import { ConfigError, formatConfigIssue, parseConfig } from '@tessera/config-schema'
import type { ConfigDocument, ConfigIssue, Tenant } from '@tessera/config-schema'
import type { Resource } from './resources.js'

export interface ValidationContext {
  /** The absolute directory that `spec.providers` paths resolve against (TESSERA_CONFIG). */
  providerDirectory: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
}

/** A tenant to build, with the document it came from; or every problem, one line each. */
export type Validation =
  { ok: true; tenant: Tenant; document: ConfigDocument } | { ok: false; issues: string[] }

/**
 * Validates the resource `object`, named `file` in messages (`kubernetes:NAMESPACE/NAME`),
 * alone and then against `others`, the documents of the tenants served under other names.
 * Only this resource's problems are reported: the others were accepted together, so a clash
 * between two documents is reported on this one, the later.
 */
export function validateTenantResource(
  file: string,
  object: Resource,
  others: readonly ConfigDocument[],
  context: ValidationContext,
): Validation {
  const { value, issues: pathIssues, badIndexes } = resolveProviders(object, context, file)
  const document: ConfigDocument = { file, value, locate: () => 0 }
  const own = new Set(providerPaths(value))
  const parseOptions = {
    env: context.env,
    jwtSecret: context.jwtSecret,
    // Only this resource's scripts are looked for: the others were checked when accepted.
    fileExists: (absolute: string) => !own.has(absolute) || isFile(absolute),
  }
  // This document last: the rules report a clash on the later of two documents.
  const result = parseConfig([...others, document], parseOptions)
  const issues = [
    ...pathIssues,
    ...(result.ok ? [] : result.issues).filter(
      (issue) => issue.file === file && !badIndexes.has(issue.path),
    ),
  ]
  if (issues.length > 0) {
    return { ok: false, issues: issues.map((issue) => withoutLineZero(formatConfigIssue(issue))) }
  }
  // The tenants served were accepted together, so a problem left is theirs, not this one's.
  const alone = result.ok ? result : parseConfig([document], parseOptions)
  const tenant = alone.ok ? alone.tenants[alone.tenants.length - 1] : undefined
  if (tenant === undefined) return { ok: false, issues: [`${file}: not read`] }
  return { ok: true, tenant, document }
}

/**
 * Makes `spec.providers` absolute under the provider directory. Entries that are absolute or
 * lead out of it are reported, and parseConfig's own issues at those paths are then left out.
 */
function resolveProviders(
  object: Resource,
  { providerDirectory: directory }: ValidationContext,
  file: string,
): { value: Record<string, unknown>; issues: ConfigIssue[]; badIndexes: Set<string> } {
  const value = structuredClone(object) as Record<string, unknown>
  const issues: ConfigIssue[] = []
  const badIndexes = new Set<string>()
  const spec = value.spec
  if (typeof spec !== 'object' || spec === null) return { value, issues, badIndexes }
  const providers = (spec as Record<string, unknown>).providers
  if (!Array.isArray(providers)) return { value, issues, badIndexes }
  providers.forEach((provider: unknown, index) => {
    if (typeof provider !== 'string' || provider === '') return
    const absolute = resolve(directory, provider)
    const inside = relative(directory, absolute)
    const path = `spec.providers.${index}`
    if (isAbsolute(provider) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      issues.push({
        file,
        line: 0,
        path,
        message: 'must be a relative path inside the provider directory (TESSERA_CONFIG)',
      })
      badIndexes.add(path)
    }
    providers[index] = absolute
  })
  return { value, issues, badIndexes }
}

function providerPaths(value: Record<string, unknown>): string[] {
  const spec = value.spec as { providers?: unknown } | undefined
  return Array.isArray(spec?.providers)
    ? spec.providers.filter((p): p is string => typeof p === 'string')
    : []
}

/** The resources have no lines: `kubernetes:ns/a:0` reads better as `kubernetes:ns/a`. */
function withoutLineZero(line: string): string {
  return line.replace(/(kubernetes:[^\s:()]+\/[^\s:()]+):0\b/g, '$1')
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false
}

/** @throws ConfigError unless `directory` is a directory (the provider scripts' home). */
export function checkProviderDirectory(directory: string): void {
  if (statSync(directory, { throwIfNoEntry: false })?.isDirectory() === true) return
  throw new ConfigError([
    {
      file: 'environment',
      line: 0,
      path: 'TESSERA_CONFIG',
      message: `with TESSERA_CONFIG_SOURCE=kubernetes, must be the directory of the provider scripts (${directory} is not a directory)`,
    },
  ])
}
