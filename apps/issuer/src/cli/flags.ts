import { parseArgs } from 'node:util'
import { SETTING_NAMES } from '@tessera/config-schema'
import { UsageError } from './help.js'

/** `JWT_SECRET` ⇄ `--jwt-secret`: every setting is also a flag. */
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
 * Parses flags strictly: an unknown flag, a flag without its value and (unless `positionals`)
 * an argument are usage errors of `command`, not silently ignored. `--config` is a short alias
 * of `--tessera-config`.
 */
export function parseCommandLine(
  command: string,
  args: string[],
  extra: Record<string, { type: 'string' | 'boolean' }> = {},
  { positionals: allowPositionals = false }: { positionals?: boolean } = {},
): ParsedCommandLine {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    ...extra,
    config: { type: 'string' },
  }
  for (const name of SETTING_NAMES) options[flagName(name)] = { type: 'string' }
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(command, parserMessage(error, options))
  }
  const { values, positionals } = parsed
  if (!allowPositionals && positionals.length > 0) {
    throw new UsageError(command, `unexpected argument "${positionals[0]}"`)
  }
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

/**
 * node:util's messages tell how to pass a positional that starts with `-`; one line naming the
 * flag reads better.
 */
function parserMessage(error: unknown, options: Record<string, { type: string }>): string {
  const { code, message } = error as { code?: string; message?: string }
  const flag = /'(-[^' ]*)/.exec(message ?? '')?.[1]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag !== undefined) {
    return `unknown flag ${flag}`
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    const name = flag.replace(/^-+/, '')
    return options[name]?.type === 'boolean' ? `${flag} takes no value` : `${flag} needs a value`
  }
  return message ?? String(error)
}
