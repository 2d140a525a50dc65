/**
 * The `files` source: tenant YAML under TESSERA_CONFIG, taken as a whole.
 *
 * @module
 */
import { loadConfig } from '@tessera/config-schema'
import type { Logger } from 'pino'
import { describeProblems } from './source.js'
import type { TenantSource, TenantTarget } from './source.js'
import { watchPath } from './watch-path.js'

export interface FilesSourceOptions {
  /** TESSERA_CONFIG: a YAML file or a directory searched recursively. */
  path: string
  /** Environment for `{env: VAR}` references. */
  env: Record<string, string | undefined>
  /** The JWT_SECRET setting. */
  jwtSecret: string | undefined
  logger: Logger
  /** Reload on every change under `path` (the CLI does; embedders and tests call `reload`). */
  watch: boolean
}

/**
 * Reads every tenant from `path` and serves them all or none: the first load throws on any
 * problem (`ConfigError`, `ProviderError`, ...), before the issuer listens. A reload (SIGHUP, or a
 * change on disk when watching) with any problem is refused as a whole and the running
 * configuration stays; every problem is logged as `file:line: field: problem`.
 */
export function createFilesSource(options: FilesSourceOptions): TenantSource {
  const { logger } = options
  let target: TenantTarget | undefined
  let isLoaded = false
  let stopWatching: (() => void) | undefined
  let closed = false
  const read = () => loadConfig(options.path, { env: options.env, jwtSecret: options.jwtSecret })

  let reloading: Promise<boolean> = Promise.resolve(true)
  const reload = (): Promise<boolean> => {
    // One reload at a time: a burst of file events must not interleave two builds.
    reloading = reloading.then(async () => {
      if (target === undefined || closed) return false
      let names: string[]
      try {
        const tenants = await read()
        await target.replaceAll(tenants)
        names = tenants.map((tenant) => tenant.name)
      } catch (error) {
        logger.error(
          { problems: describeProblems(error) },
          'configuration reload refused; still serving the previous configuration',
        )
        return false
      }
      logger.info({ tenants: names }, 'configuration reloaded')
      return true
    })
    return reloading
  }

  return {
    listenBeforeLoaded: false,
    async start(to) {
      target = to
      await to.replaceAll(await read())
      isLoaded = true
      if (options.watch && !closed) {
        stopWatching = watchPath(options.path, () => void reload(), logger)
      }
    },
    loaded: () => isLoaded,
    reload,
    close() {
      closed = true
      stopWatching?.()
      return Promise.resolve()
    },
  }
}
