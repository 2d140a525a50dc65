import { existsSync } from 'node:fs'
import type { Settings } from '@tessera/config-schema'

/**
 * The default tenant directory is missing: in a fresh clone `./config` does not exist, and the
 * bare `no such file or directory` left people guessing what to do.
 */
export class MissingConfigError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(message)
    this.name = 'MissingConfigError'
  }
}

/**
 * Throws {@link MissingConfigError} when TESSERA_CONFIG was not given and its default directory
 * does not exist. A path that was given is left to the loader, whose message names it.
 */
export function assertConfigExists(
  settings: Settings,
  vars: Record<string, string | undefined>,
  mode: 'dev' | 'start',
  command: string,
): void {
  if (settings.configSource !== 'files') return
  if (vars.TESSERA_CONFIG !== undefined && vars.TESSERA_CONFIG !== '') return
  if (existsSync(settings.config)) return
  const examples =
    mode === 'dev'
      ? 'run it from the repository root'
      : command === 'start'
        ? 'run tessera dev for the examples'
        : 'add --dev for the examples'
  throw new MissingConfigError(
    command,
    `${settings.config} does not exist (the default TESSERA_CONFIG of ` +
      `${mode === 'dev' ? 'dev' : 'start'}); ${examples}, or give --config DIR`,
  )
}
