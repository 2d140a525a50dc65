import { parseArgs } from 'node:util'
import { SETTING_NAMES } from '@tessera/config-schema'

/** `JWT_SECRET` ⇄ `--jwt-secret`: every setting is also a flag (DESIGN §2). */
export function flagName(setting: string): string {
  return setting.toLowerCase().replace(/_/g, '-')
}

export interface ParsedCommandLine {
  positionals: string[]
  /** Settings given as flags, by environment name. */
  settings: Record<string, string>
  /** Other flags of the command. */
  flags: Record<string, string | boolean>
}

/**
 * Parses flags strictly: an unknown flag is an error, not silently ignored. `--config` is a
 * short alias of `--tessera-config`.
 */
export function parseCommandLine(
  args: string[],
  extra: Record<string, { type: 'string' | 'boolean' }> = {},
): ParsedCommandLine {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    ...extra,
    config: { type: 'string' },
  }
  for (const name of SETTING_NAMES) options[flagName(name)] = { type: 'string' }
  const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true })
  const settings: Record<string, string> = {}
  const flags: Record<string, string | boolean> = {}
  for (const name of SETTING_NAMES) {
    const value = values[flagName(name)]
    if (typeof value === 'string') settings[name] = value
  }
  if (typeof values.config === 'string') settings.TESSERA_CONFIG = values.config
  for (const name of Object.keys(extra)) {
    const value = values[name]
    if (value !== undefined) flags[name] = value
  }
  return { positionals, settings, flags }
}
