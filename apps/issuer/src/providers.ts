import { pathToFileURL } from 'node:url'
import type { AuthenticatedUser, UserAuthenticator } from '@tessera/grants'
import * as z from 'zod'
import { verifyPassword } from './password-hash.js'

/** Helpers handed to provider scripts as the second argument of `authenticate`. */
export interface ProviderTools {
  /** Constant-time check of a password against a `tessera hash-password` hash. */
  verifyPassword: typeof verifyPassword
}

interface ProviderModule {
  authenticate(
    credentials: { username: string; password: string },
    tools: ProviderTools,
  ): Promise<unknown>
}

const ProviderModuleSchema = z.object({
  authenticate: z.custom<ProviderModule['authenticate']>((value) => typeof value === 'function'),
})

const AuthenticatedUserSchema = z.object({
  sub: z.string().min(1),
  claims: z.record(z.string(), z.unknown()).optional(),
})

/** A provider script that could not be loaded; the CLI prints `message` and stops. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError'
}

const tools: ProviderTools = { verifyPassword }

/**
 * Imports provider scripts; the same file serving several tenants is imported once. A
 * `generation` above 0 (a configuration reload) imports each file afresh, so edited scripts
 * take effect: Node caches ES modules by URL, so the URL carries the generation.
 */
export async function loadProviders(
  files: readonly string[],
  generation = 0,
): Promise<Map<string, ProviderModule>> {
  const loaded = new Map<string, ProviderModule>()
  const problems: string[] = []
  for (const file of new Set(files)) {
    try {
      const url = pathToFileURL(file)
      if (generation > 0) url.searchParams.set('generation', String(generation))
      const module = (await import(url.href)) as { default?: unknown }
      const parsed = ProviderModuleSchema.safeParse(module.default)
      if (!parsed.success) {
        problems.push(`${file}: provider script must export default { authenticate(credentials) }`)
        continue
      }
      loaded.set(file, parsed.data)
    } catch (error) {
      problems.push(`${file}: provider script failed to load: ${(error as Error).message}`)
    }
  }
  if (problems.length > 0) throw new ProviderError(problems.join('\n'))
  return loaded
}

/**
 * Chains a tenant's providers: tried in order, the first non-null answer wins (DESIGN §3).
 * An answer that is not `{ sub, claims? }` is a provider bug and fails the request.
 */
export function createUserAuthenticator(
  files: readonly string[],
  modules: ReadonlyMap<string, ProviderModule>,
): UserAuthenticator {
  const chain = files.map((file) => ({ file, module: modules.get(file)! }))
  return {
    async authenticate(credentials): Promise<AuthenticatedUser | null> {
      for (const { file, module } of chain) {
        const answer = await module.authenticate({ ...credentials }, tools)
        if (answer === null || answer === undefined) continue
        const parsed = AuthenticatedUserSchema.safeParse(answer)
        if (!parsed.success) {
          throw new Error(`provider ${file} returned something other than { sub, claims? }`)
        }
        return parsed.data
      }
      return null
    },
  }
}
