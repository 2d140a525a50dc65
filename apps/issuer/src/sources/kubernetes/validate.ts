/**
 * Validation of one Tenant resource: config-schema's rules on the resource alone, then against
 * what the tenants already served claim, with `spec.providers` confined to the provider
 * directory. Both cost time in proportion to the one resource, however many tenants are served.
 *
 * @module
 */
import { isAbsolute, relative, resolve } from 'node:path'
import { statSync } from 'node:fs'
import { ConfigError, formatConfigIssue, parseConfigDocument } from '@tessera/config-schema'
import type { ConfigFile, ConfigIssue, Tenant } from '@tessera/config-schema'
import type { ServedClaims } from '../reconcile/claims.js'
import type { Resource } from './resources.js'

export interface ValidationContext {
  /** The absolute directory that `spec.providers` paths resolve against (TESSERA_CONFIG). */
  providerDirectory: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
  /** Takes client secrets shorter than 16 characters instead of refusing them (dev warns). */
  shortClientSecrets?: ((issue: ConfigIssue) => void) | undefined
}

/**
 * A tenant to build, with the checked resource that {@link ServedClaims.serve} takes once it is
 * served; or every problem, one line each.
 */
export type Validation =
  { ok: true; tenant: Tenant; unit: ConfigFile } | { ok: false; issues: string[] }

/**
 * Validates the resource `object`, named `file` in messages (`kubernetes:NAMESPACE/NAME`),
 * alone and then against `served`, what the tenants served under other names claim. Only this
 * resource's problems are reported: the served tenants were accepted one after the other, so a
 * clash between two is reported on this one, the later.
 */
export function validateTenantResource(
  file: string,
  object: Resource,
  served: ServedClaims,
  context: ValidationContext,
): Validation {
  const { value, issues: pathIssues, badIndexes } = resolveProviders(object, context, file)
  // Only this resource's scripts are looked for: those of the served ones were checked when
  // they were accepted, and are never looked at again.
  const unit = parseConfigDocument(
    { file, value, locate: () => 0 },
    {
      env: context.env,
      jwtSecret: context.jwtSecret,
      ...(context.shortClientSecrets === undefined
        ? {}
        : { shortClientSecrets: context.shortClientSecrets }),
    },
  )
  const issues = [
    ...pathIssues,
    ...unit.issues.filter((issue) => !badIndexes.has(issue.path)),
    ...served.check(object.metadata.name, unit),
  ]
  if (issues.length > 0) {
    return { ok: false, issues: issues.map((issue) => withoutLineZero(formatConfigIssue(issue))) }
  }
  const [tenant] = unit.tenants
  if (tenant === undefined) return { ok: false, issues: [`${file}: not read`] }
  return { ok: true, tenant, unit }
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

/** The resources have no lines: `kubernetes:ns/a:0` reads better as `kubernetes:ns/a`. */
function withoutLineZero(line: string): string {
  return line.replace(/(kubernetes:[^\s:()]+\/[^\s:()]+):0\b/g, '$1')
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
