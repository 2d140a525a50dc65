import { pathToFileURL } from 'node:url'
import { ProviderFailureError, RESERVED_CLAIMS } from '@tessera/grants'
import type { AuthenticatedUser, UserAuthenticator } from '@tessera/grants'
import * as z from 'zod'
import { verifyPassword } from './password-hash.js'

/** Helpers handed to provider scripts as the second argument of `authenticate`. */
export interface ProviderTools {
  /** Constant-time check of a password against a `tessera hash-password` hash. */
  verifyPassword: typeof verifyPassword
  /**
   * Aborted when the call has taken PROVIDER_TIMEOUT_MS: its answer will be ignored, so work
   * still under way (a fetch, a database query) may as well stop.
   */
  signal: AbortSignal
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

/**
 * A provider's answer for a good username and password. Claims must be JSON (they travel in
 * tokens and the store) and may not set what the issuer sets itself: a provider that tries is
 * broken or hostile, and its answer is refused rather than quietly trimmed.
 */
const AuthenticatedUserSchema = z.object(
  {
    sub: z.string({ error: 'sub is not a string' }).min(1, 'sub is empty'),
    claims: z
      .record(z.string(), z.json(), { error: 'claims is not an object of JSON values' })
      .superRefine((claims, ctx) => {
        const reserved = Object.keys(claims).filter((name) => RESERVED_CLAIMS.has(name))
        if (reserved.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `claims would replace reserved claims (${reserved.join(', ')})`,
          })
        }
      })
      .optional(),
  },
  { error: 'the answer is not { sub, claims? } or null' },
)

/** A provider script that could not be loaded; the CLI prints `message` and stops. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError'
}

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

/** Imported provider scripts by file. */
export type ProviderModules = ReadonlyMap<string, ProviderModule>

/** The provider scripts imported so far, shared by every build of tenants. */
export interface ProviderCache {
  /**
   * The modules of every script `tenants` name. Only scripts no tenant used before are imported,
   * unless `fresh` (a reload after a script changed), which imports every one afresh.
   */
  modulesFor(
    tenants: readonly { providers: readonly string[] }[],
    fresh: boolean,
  ): Promise<ProviderModules>
}

/** A cache of provider modules by file, emptied by each fresh import. */
export function createProviderCache(): ProviderCache {
  let generation = 0
  let modules: ProviderModules = new Map()
  return {
    async modulesFor(tenants, fresh) {
      if (fresh) {
        generation++
        modules = new Map()
      }
      const missing = new Set<string>()
      for (const tenant of tenants) {
        for (const file of tenant.providers) if (!modules.has(file)) missing.add(file)
      }
      if (missing.size === 0) return modules
      const loaded = await loadProviders([...missing], generation)
      const next = new Map(modules)
      for (const [file, module] of loaded) next.set(file, module)
      modules = next
      return next
    },
  }
}

/** How the user authenticator calls provider scripts. */
export interface UserAuthenticatorOptions {
  /** PROVIDER_TIMEOUT_MS: how long one provider call may take. */
  timeoutMs: number
}

/**
 * What a provider threw, fit for the log: the password is cut out wherever it appears, since
 * scripts do put what they were given into their messages.
 */
function describeThrown(error: unknown, password: string): string {
  let text: string
  try {
    text =
      error instanceof Error
        ? `${error.name}: ${error.message}`
        : typeof error === 'string'
          ? error
          : `a value of type ${error === null ? 'null' : typeof error}`
  } catch {
    // A getter or proxy that throws while it is read.
    text = 'a value that could not be read'
  }
  let safe = text
  if (password !== '') {
    for (const form of new Set([password, JSON.stringify(password).slice(1, -1)])) {
      safe = safe.split(form).join('[password]')
    }
  }
  return `threw ${safe.length > 300 ? `${safe.slice(0, 300)}…` : safe}`
}

/**
 * The signal a script gets, made so that its abort listeners cannot throw into the process. An
 * EventTarget reports a listener's exception as an uncaught exception a tick later, so a script
 * whose listener throws when its call times out would stop the issuer, every tenant with it,
 * and Node would print the error (the password, as like as not) on the way out. The signal
 * stays a real AbortSignal, for `fetch` and database drivers; only its listeners are wrapped.
 */
function shieldedSignal(signal: AbortSignal): AbortSignal {
  type Listener = Parameters<AbortSignal['addEventListener']>[1]
  type Options = Parameters<AbortSignal['addEventListener']>[2]
  const shields = new WeakMap<Listener, (event: Event) => void>()
  const shield = (listener: Listener): ((event: Event) => void) => {
    let shielded = shields.get(listener)
    if (shielded === undefined) {
      shielded = function (this: unknown, event: Event): void {
        try {
          if (typeof listener === 'function') listener.call(this, event)
          else listener.handleEvent(event)
        } catch {
          // The call has been given up on already; what its listener thinks of that is moot.
        }
      }
      shields.set(listener, shielded)
    }
    return shielded
  }
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  // `onabort` is set through addEventListener too, so these two cover every listener.
  Object.defineProperties(signal, {
    addEventListener: {
      value: (type: string, listener: Listener | null, options?: Options) => {
        // A null listener is let through: EventTarget ignores it.
        add(type, (listener === null ? null : shield(listener)) as Listener, options)
      },
    },
    removeEventListener: {
      value: (type: string, listener: Listener | null, options?: Options) => {
        remove(
          type,
          (listener === null ? null : (shields.get(listener) ?? listener)) as Listener,
          options,
        )
      },
    },
  })
  return signal
}

/**
 * One provider call, bounded by `timeoutMs`. Past it the call is abandoned: its signal is
 * aborted, and whatever it answers or throws later is ignored.
 */
async function callProvider(
  file: string,
  module: ProviderModule,
  credentials: { username: string; password: string },
  timeoutMs: number,
): Promise<unknown> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new ProviderFailureError(
        'ERR_PROVIDER_TIMEOUT',
        file,
        `no answer within ${timeoutMs} ms`,
      )
      controller.abort(error)
      reject(error)
    }, timeoutMs)
  })
  const failed = (error: unknown): ProviderFailureError =>
    new ProviderFailureError(
      'ERR_PROVIDER_FAILED',
      file,
      describeThrown(error, credentials.password),
    )
  try {
    let call: Promise<unknown>
    try {
      // Called inside try: a script that throws before returning a promise fails the same way.
      call = Promise.resolve(
        module.authenticate(
          { ...credentials },
          { verifyPassword, signal: shieldedSignal(controller.signal) },
        ),
      )
    } catch (error) {
      throw failed(error)
    }
    return await Promise.race([
      call.catch((error: unknown) => {
        throw failed(error)
      }),
      timedOut,
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Checks a provider's answer: the user, null for "not mine / wrong password", else a failure. */
function parseAnswer(file: string, answer: unknown): AuthenticatedUser | null {
  if (answer === null || answer === undefined) return null
  let parsed
  try {
    parsed = AuthenticatedUserSchema.safeParse(answer)
  } catch {
    // A getter or proxy that throws while it is read.
    parsed = undefined
  }
  if (parsed?.success) {
    // zod checks each value, not the whole: claims that refer to themselves pass, then fail
    // when a token is signed, far from the provider. Writing them out once here finds them.
    try {
      JSON.stringify(parsed.data.claims)
      return parsed.data
    } catch {
      throw new ProviderFailureError(
        'ERR_PROVIDER_FAILED',
        file,
        'answered a malformed value: claims holds a value that is not JSON',
      )
    }
  }
  const issue = parsed?.error.issues[0]
  // Inside claims, zod's message would describe a union; the path names a claim, and stays out.
  const reason =
    issue === undefined
      ? 'the answer could not be read'
      : issue.path[0] === 'claims' && issue.path.length > 1
        ? 'claims holds a value that is not JSON'
        : issue.message
  throw new ProviderFailureError(
    'ERR_PROVIDER_FAILED',
    file,
    `answered a malformed value: ${reason}`,
  )
}

/**
 * Chains a tenant's providers: tried in order, the first non-null answer wins. Each call may
 * take `timeoutMs`; a provider that takes longer, throws, or answers something other than
 * `{ sub, claims? }` or null fails the check with a {@link ProviderFailureError} naming it.
 */
export function createUserAuthenticator(
  files: readonly string[],
  modules: ReadonlyMap<string, ProviderModule>,
  options: UserAuthenticatorOptions,
): UserAuthenticator {
  const chain = files.map((file) => ({ file, module: modules.get(file)! }))
  return {
    async authenticate(credentials): Promise<AuthenticatedUser | null> {
      for (const { file, module } of chain) {
        const answer = await callProvider(file, module, credentials, options.timeoutMs)
        const user = parseAnswer(file, answer)
        if (user !== null) return user
      }
      return null
    },
  }
}
