/**
 * The rules across settings: checked on the values as read, after each variable's own schema.
 *
 * @module
 */
import type { SettingsMode } from '../setting-definition.js'
import type { SettingName, WrittenSettings } from '../settings-table.js'

/** A refused setting, before it is given the `environment` file of a settings issue. */
export interface SettingProblem {
  env: SettingName
  message: string
}

/**
 * A rule reads the values of the variables that parsed (a refused one is absent), so that its
 * problem is reported along with theirs, and says nothing when a value it needs is absent.
 */
type SettingRule = (
  values: Partial<WrittenSettings>,
  mode: SettingsMode,
) => SettingProblem | undefined

const RULES: readonly SettingRule[] = [
  // Retired keys must outlive every token they signed.
  ({ tokenExpirationHours, jwksGraceHours }) => {
    if (tokenExpirationHours === undefined || jwksGraceHours === undefined) return undefined
    const floor = 2 * tokenExpirationHours
    return jwksGraceHours < floor
      ? {
          env: 'JWKS_GRACE_HOURS',
          message: `must be at least 2 × TOKEN_EXPIRATION_IN_HOURS (${floor})`,
        }
      : undefined
  },
  // Two listeners cannot share a port; 0 asks for a free one each.
  ({ port, adminPort }) =>
    port !== undefined && port !== 0 && adminPort === port
      ? { env: 'ADMIN_PORT', message: 'must differ from PORT (or be off)' }
      : undefined,
  // dev listens before it builds its issuer, to name its real port in the issuer URLs: one
  // process only. The value decides, not the machine: `auto` is refused on one core too.
  ({ workers }, mode) =>
    mode === 'dev' && workers !== undefined && workers !== 1
      ? { env: 'WORKERS', message: 'tessera dev runs one process; workers are for tessera start' }
      : undefined,
]

/** The problems the rules across settings find in `values`. */
export function checkSettingRules(
  values: Partial<WrittenSettings>,
  mode: SettingsMode,
): SettingProblem[] {
  return RULES.flatMap((rule) => rule(values, mode) ?? [])
}
