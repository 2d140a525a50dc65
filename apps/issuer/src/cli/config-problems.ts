import { randomBytes } from 'node:crypto'
import {
  ConfigError,
  findConfigFiles,
  formatConfigIssue,
  parseSettings,
  readConfigFile,
} from '@tessera/config-schema'
import type { ConfigIssue, Settings, SettingsMode, Tenant } from '@tessera/config-schema'
import { keepsRs256Key } from '../openid/id-token-keys.js'
import { keyEncryptionIssue } from '../keys/key-encryption.js'
import { loadProviders, ProviderError } from '../providers/scripts.js'
import { assertConfigExists } from './config-directory.js'
import { readTenants } from './read-tenants.js'

/** Settings whose problems leave the tenants to check unknown. */
const SOURCE_SETTINGS = ['TESSERA_CONFIG', 'TESSERA_CONFIG_SOURCE', 'TESSERA_KUBERNETES_NAMESPACE']

/** What `check-config` found: every problem as one line, and what it could read. */
export interface ConfigProblems {
  /** One line per problem, `file: field path: what is wrong`, in the order found. */
  problems: string[]
  /** The settings, with defaults standing in for refused variables; undefined if none parse. */
  settings: Settings | undefined
  /** The tenants, when every one was read without a problem; else empty. */
  tenants: Tenant[]
  /** What `start` or `dev` would warn about: not problems. */
  notes: string[]
}

/**
 * Checks settings, tenants, provider scripts and the tenants' need of KEY_ENCRYPTION_SECRET, and
 * collects every problem rather than stopping at the first kind: a refused setting is replaced by
 * its default to go on, a tenant file with a problem leaves the others to be checked, and a
 * missing JWT_SECRET does not hide that RS256 tenants need KEY_ENCRYPTION_SECRET.
 */
export async function findConfigProblems(
  vars: Record<string, string | undefined>,
  mode: SettingsMode,
): Promise<ConfigProblems> {
  const problems: string[] = []
  const notes: string[] = []
  const { settings, refused } = readSettings(vars, mode, problems)
  if (settings === undefined) return { problems, settings, tenants: [], notes }
  if (SOURCE_SETTINGS.some((name) => refused.has(name))) {
    return { problems, settings, tenants: [], notes }
  }
  assertConfigExists(settings, vars, mode, 'check-config')
  // A refused JWT_SECRET is reported once, as a setting: the tenants are checked with a stand-in.
  // dev makes one up when none is set, so HS256 tenants load; --dev checks the same.
  let jwtSecret = settings.jwtSecret
  if (refused.has('JWT_SECRET') || (mode === 'dev' && jwtSecret === undefined)) {
    jwtSecret = randomBytes(32).toString('base64url')
  }
  if (mode === 'dev' && !refused.has('JWT_SECRET') && settings.jwtSecret === undefined) {
    notes.push('JWT_SECRET is not set: dev would use a random secret for each process')
  }
  let tenants: Tenant[]
  let complete = true
  try {
    // start refuses a short client secret like any other problem; dev serves it with a warning.
    const shortSecret = (issue: ConfigIssue): void => {
      notes.push(`${formatConfigIssue(issue)} (tessera start refuses it)`)
    }
    const read = await readTenants(
      settings,
      vars,
      jwtSecret,
      mode === 'dev' ? shortSecret : undefined,
    )
    tenants = read.tenants
    problems.push(...read.refused)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    problems.push(...error.issues.map(formatConfigIssue))
    // With the kubernetes source, TESSERA_CONFIG holds provider scripts only.
    tenants = settings.configSource === 'files' ? await soundTenants(settings.config, vars) : []
    complete = false
  }
  try {
    await loadProviders(tenants.flatMap((tenant) => tenant.providers))
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error
    problems.push(...error.message.split('\n'))
  }
  // A refused KEY_ENCRYPTION_SECRET is reported once, as a setting: it is not also "not set".
  const keyEncryptionSecret = refused.has('KEY_ENCRYPTION_SECRET')
    ? vars.KEY_ENCRYPTION_SECRET
    : settings.keyEncryptionSecret
  const unsealed = keyEncryptionIssue(tenants, keyEncryptionSecret, mode)
  if (unsealed !== undefined) problems.push(formatConfigIssue(unsealed))
  // start refuses them (above); dev serves them with a warning, and --dev notes it.
  if (mode === 'dev' && keyEncryptionSecret === undefined && tenants.some(keepsRs256Key)) {
    notes.push('KEY_ENCRYPTION_SECRET is not set: RS256 private keys would be stored unencrypted')
  }
  return { problems, settings, tenants: complete ? tenants : [], notes }
}

/**
 * Parses the settings, adding each problem to `problems`. A refused variable is then left out,
 * so that its default stands in for the checks that follow (a default may clash in turn, as
 * ADMIN_PORT with PORT: then the next pass leaves that one out as well).
 */
function readSettings(
  vars: Record<string, string | undefined>,
  mode: SettingsMode,
  problems: string[],
): { settings: Settings | undefined; refused: Set<string> } {
  const refused = new Set<string>()
  for (let pass = 0; pass < 3; pass++) {
    const current = { ...vars }
    for (const name of refused) delete current[name]
    try {
      return { settings: parseSettings(current, mode), refused }
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      // Only the first pass reads what the user gave; later ones are about stand-in defaults.
      if (pass === 0) problems.push(...error.issues.map(formatConfigIssue))
      for (const issue of error.issues) refused.add(issue.path.split('.')[0] as string)
    }
  }
  return { settings: undefined, refused }
}

/**
 * The tenants of the files that have no problem of their own, for the checks that follow the
 * tenant files' (provider scripts, KEY_ENCRYPTION_SECRET) once some file was refused.
 */
async function soundTenants(
  path: string,
  env: Record<string, string | undefined>,
): Promise<Tenant[]> {
  let files: string[]
  try {
    files = await findConfigFiles(path)
  } catch {
    // Already reported by the loader, naming the path.
    return []
  }
  return files.flatMap((file) => readConfigFile(file, { env, jwtSecret: undefined }).tenants)
}
