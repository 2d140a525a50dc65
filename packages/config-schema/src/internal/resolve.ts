/**
 * The checks that need context beyond the document: provider scripts relative to the file, and
 * secrets given as `{env: VAR}`. They run on the raw document, independently of the schema, so
 * a missing script is reported together with, say, a malformed client_id.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { ENV_NAME, MIN_CLIENT_SECRET_LENGTH, MIN_SECRET_LENGTH } from './fields.js'
import type { FieldPath } from './issues.js'
import { isRecord } from './is-record.js'

/** What the resolution needs to know about where the document came from. */
export interface ResolveContext {
  file: string
  env: Record<string, string | undefined>
  fileExists: (absolutePath: string) => boolean
  report: (path: FieldPath, message: string) => void
  /** Takes a client secret that is too short instead of `report` (tessera dev warns). */
  shortClientSecret?: (path: FieldPath, message: string) => void
}

/** Provider paths made absolute and secrets read from the environment, where they are valid. */
export interface ResolvedSpec {
  ok: boolean
  providers: string[]
  jwtSecret: string | undefined
  /** Client secrets by client index. */
  clientSecrets: Map<number, string>
  /** `dynamic_clients.registration_token`, read from the environment when given as `{env}`. */
  registrationToken: string | undefined
}

/** Resolves the `config`/`spec` mapping found at `base`, reporting every problem on the way. */
export function resolveSpec(spec: unknown, base: FieldPath, context: ResolveContext): ResolvedSpec {
  let ok = true
  const report = (path: FieldPath, message: string) => {
    ok = false
    context.report(path, message)
  }
  const resolveSecret = (
    raw: unknown,
    path: FieldPath,
    minLength: number,
    tooShort: (path: FieldPath, message: string) => void = report,
  ) => {
    if (typeof raw === 'string') return raw
    const name = envName(raw)
    if (name === undefined) return undefined
    const value = context.env[name]
    // An empty value counts as unset, as for the settings.
    if (value === undefined || value === '') {
      report(path, `environment variable ${name} is not set`)
      return undefined
    }
    if (value.length < minLength) {
      tooShort(path, `must be at least ${minLength} characters (environment variable ${name})`)
      // Refused, it resolves to nothing; taken as a warning, it is used.
      if (tooShort === report) return undefined
    }
    return value
  }

  const fields = isRecord(spec) ? spec : {}
  const folder = dirname(context.file)
  const providers: string[] = []
  if (Array.isArray(fields.providers)) {
    fields.providers.forEach((provider: unknown, index) => {
      if (typeof provider !== 'string' || provider === '') return
      const absolute = resolve(folder, provider)
      providers.push(absolute)
      if (!context.fileExists(absolute)) {
        // Shown the way the file itself is shown: relative when the file was given relative.
        const shown = isAbsolute(provider) ? provider : join(folder, provider)
        report([...base, 'providers', index], `provider script not found: ${shown}`)
      }
    })
  }

  const jwtSecret = resolveSecret(fields.jwt_secret, [...base, 'jwt_secret'], MIN_SECRET_LENGTH)
  const clientSecrets = new Map<number, string>()
  if (Array.isArray(fields.clients)) {
    fields.clients.forEach((client: unknown, index) => {
      if (!isRecord(client)) return
      const path = [...base, 'clients', index, 'client_secret']
      const short = context.shortClientSecret ?? report
      const raw = client.client_secret
      // The schema checks the type; the length of a literal is checked here, with the rest.
      if (typeof raw === 'string' && raw !== '' && raw.length < MIN_CLIENT_SECRET_LENGTH) {
        short(path, `must be at least ${MIN_CLIENT_SECRET_LENGTH} characters`)
      }
      const secret = resolveSecret(raw, path, MIN_CLIENT_SECRET_LENGTH, short)
      if (secret !== undefined) clientSecrets.set(index, secret)
    })
  }
  const dynamic = isRecord(fields.dynamic_clients) ? fields.dynamic_clients : {}
  const registrationToken = resolveSecret(
    dynamic.registration_token,
    [...base, 'dynamic_clients', 'registration_token'],
    MIN_CLIENT_SECRET_LENGTH,
  )
  // A copy of its length: an array grown by push keeps room for 17 entries, and every tenant
  // keeps this one (ten thousand tenants, 1.5 MB).
  return { ok, providers: providers.slice(), jwtSecret, clientSecrets, registrationToken }
}

/** The variable name of a well-formed `{env: NAME}`, else undefined (the schema reports it). */
function envName(raw: unknown): string | undefined {
  if (!isRecord(raw) || Object.keys(raw).length !== 1) return undefined
  return typeof raw.env === 'string' && ENV_NAME.test(raw.env) ? raw.env : undefined
}
