/**
 * `loadConfig`: reads tenant YAML from a file or a directory tree, then parses it.
 *
 * @module
 */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createConfigIndex, describeReadError, readConfigFile } from './config-file.js'
import type { ConfigFile, ConfigIndex } from './config-file.js'
import { findYamlFiles } from './internal/find-files.js'
import { ConfigError } from './model.js'
import type { ConfigIssue, Tenant } from './model.js'
import { isFile } from './parse-config.js'
import type { ParseConfigOptions } from './parse-config.js'

/** Options of {@link loadConfig}: the same as `parseConfig`'s. */
export type LoadConfigOptions = ParseConfigOptions

/**
 * Loads every tenant from `path`: a YAML file, or a directory searched recursively for `*.yaml`
 * and `*.yml` files (in sorted order; names starting with a dot and folders named `node_modules`
 * are skipped). A file may hold several documents; empty ones are skipped.
 *
 * Throws a {@link ConfigError} carrying every issue, each with its real 1-based line: YAML syntax
 * errors, schema and rule problems (see `parseConfig`), a missing path, or no tenant at all.
 * File names in issues are `path` joined with the file's path inside it.
 *
 * @example
 * try {
 *   const options = { env: process.env, jwtSecret: process.env.JWT_SECRET }
 *   const tenants = await loadConfig('examples', options)
 * } catch (error) {
 *   if (!(error instanceof ConfigError)) throw error
 *   // examples/hs256/tenant.yaml:7: config.clients.0.client_id: must be a UUID
 *   console.error(error.message)
 *   process.exitCode = 1
 * }
 * @see docs/settings.md (TESSERA_CONFIG)
 */
export async function loadConfig(path: string, options: LoadConfigOptions): Promise<Tenant[]> {
  return (await loadConfigFiles(path, options)).tenants
}

/** Every file of a configuration, and the index of what they claim; see {@link loadConfigFiles}. */
export interface LoadedConfig {
  /** Every tenant, in file order. */
  tenants: Tenant[]
  /** The files read, in the order read (sorted), each with its tenants. */
  files: ConfigFile[]
  /** The names, hosts and client_ids of every file, to check a changed file against the rest. */
  index: ConfigIndex
  /** Whether `path` is a directory (else the one file). */
  directory: boolean
}

/**
 * {@link loadConfig}, answering each file with its tenants and the index of what they claim, for
 * a caller that later reads changed files alone (`readConfigFile`, `ConfigIndex`). Throws the
 * same errors.
 */
export async function loadConfigFiles(
  path: string,
  options: LoadConfigOptions,
): Promise<LoadedConfig> {
  const found = await stat(path).catch((error: unknown) => error as NodeJS.ErrnoException)
  if (found instanceof Error) {
    const message = found.code === 'ENOENT' ? 'no such file or directory' : describeReadError(found)
    throw new ConfigError([{ file: path, line: 0, path: '', message }])
  }
  const directory = found.isDirectory()
  const names = directory ? (await findYamlFiles(path)).map((file) => join(path, file)) : [path]

  const parseOptions = { ...options, fileExists: cachedFileExists(options.fileExists) }
  const index = createConfigIndex(options.jwtSecret)
  const issues: ConfigIssue[] = []
  const files: ConfigFile[] = []
  for (const name of names) {
    const file = readConfigFile(name, parseOptions)
    files.push(file)
    // Files in the order read, then by line; the file's own issues come first on a line.
    const own = [...file.issues, ...index.admit(file)]
    issues.push(...own.sort((a, b) => a.line - b.line))
  }
  if (issues.length > 0) throw new ConfigError(issues)
  const tenants = files.flatMap((file) => file.tenants)
  if (tenants.length === 0) {
    const searched = directory ? ' (searched for *.yaml and *.yml files)' : ''
    throw new ConfigError([
      { file: path, line: 0, path: '', message: `no tenant found${searched}` },
    ])
  }
  return { tenants, files, index, directory }
}

/**
 * The YAML files `loadConfig` would read from `path`, as it names them in issues: `path` itself
 * when it is a file, else every `*.yaml` and `*.yml` file under it in sorted order. Rejects when
 * `path` cannot be read.
 */
export async function findConfigFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path]
  return (await findYamlFiles(path)).map((file) => join(path, file))
}

/**
 * A `fileExists` option (default: the one `parseConfig` uses) that looks once per path: every
 * tenant of a large configuration names the same few provider scripts.
 */
export function cachedFileExists(
  fileExists: (absolutePath: string) => boolean = isFile,
): (absolutePath: string) => boolean {
  const known = new Map<string, boolean>()
  return (absolutePath) => {
    let exists = known.get(absolutePath)
    if (exists === undefined) {
      exists = fileExists(absolutePath)
      known.set(absolutePath, exists)
    }
    return exists
  }
}
