/**
 * `parseSettings`: the environment in, the issuer's settings or every problem out.
 *
 * @see docs/settings.md
 *
 * @module
 */
import { errorMap, flattenIssues } from './internal/issues.js'
import { checkSettingRules } from './internal/setting-rules.js'
import type { SettingProblem } from './internal/setting-rules.js'
import { SETTING_NAMES, SETTINGS, SettingsSchema } from './settings-table.js'
import type { SettingDefinition, SettingsMode } from './setting-definition.js'
import type { SettingName, Settings, WrittenSettings } from './settings-table.js'
import { ConfigError } from './model.js'

export { MAX_WORKERS, SERVICE_ACCOUNT_NAMESPACE_FILE } from './internal/setting-values.js'

type Key = keyof typeof SETTINGS

/** The table's rows with their keys, for the steps that go through every setting. */
const ROWS = Object.entries(SETTINGS) as [Key, SettingDefinition<SettingName>][]

/**
 * Reads the settings from environment variables (and flags the CLI mapped onto the same names),
 * applying the defaults of `mode`. Throws a {@link ConfigError} listing every bad variable, as
 * `environment: NAME: problem`, in the order of {@link SETTING_NAMES}; values are never repeated
 * in messages.
 *
 * Three steps: each variable is parsed by its own schema; the rules across settings check the
 * values as read (so that their problems come with the other variables' ones, and `WORKERS=auto`
 * is judged by what was written rather than by this machine); then each value is normalised
 * (the mode's defaults, JWKS_GRACE_HOURS from the token lifetime, `auto` workers counted).
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
  const { values, problems } = parseVariables(vars)
  problems.push(...checkSettingRules(values, mode))
  if (problems.length > 0) throw settingsError(problems)
  return normalizeSettings(values as WrittenSettings, mode)
}

/** Each variable through its own schema: the values that parsed, and the problems of the rest. */
function parseVariables(vars: Record<string, string | undefined>): {
  values: Partial<WrittenSettings>
  problems: SettingProblem[]
} {
  const values: Partial<Record<Key, unknown>> = {}
  const problems: SettingProblem[] = []
  for (const [key, { env }] of ROWS) {
    const parsed = SettingsSchema.shape[env].safeParse(vars[env], { error: errorMap })
    if (parsed.success) values[key] = parsed.data
    else {
      for (const { message } of flattenIssues(parsed.error.issues)) problems.push({ env, message })
    }
  }
  return { values: values as Partial<WrittenSettings>, problems }
}

/** The settings of the values as read; a setting without a value is left out. */
function normalizeSettings(values: WrittenSettings, mode: SettingsMode): Settings {
  const context = { mode, tokenExpirationHours: values.tokenExpirationHours }
  const settings: Partial<Record<Key, unknown>> = {}
  for (const [key, definition] of ROWS) {
    const value = definition.normalize(values[key], context)
    if (value !== undefined) settings[key] = value
  }
  return settings as Settings
}

/** One issue per problem, in the order of the settings (the sort is stable). */
function settingsError(problems: SettingProblem[]): ConfigError {
  const position = (env: SettingName) => SETTING_NAMES.indexOf(env)
  const sorted = problems.toSorted((a, b) => position(a.env) - position(b.env))
  return new ConfigError(
    sorted.map(({ env, message }) => ({ file: 'environment', line: 0, path: env, message })),
  )
}
