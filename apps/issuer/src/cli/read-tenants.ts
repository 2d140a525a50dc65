import { Writable } from 'node:stream'
import { loadConfig } from '@tessera/config-schema'
import type { ConfigIssue, Settings, Tenant } from '@tessera/config-schema'
import { createLogger } from '../observability/logger.js'

/** How long a one-shot command waits for the API server's list before giving up. */
const LIST_TIMEOUT_MS = 30_000

/** The tenants a command works on, and the problems found reading them (one line each). */
export interface TenantsRead {
  tenants: Tenant[]
  /** Resources the Kubernetes source refused; empty for files, whose problems throw. */
  refused: string[]
}

/**
 * Reads the tenants as `tessera start` would serve them, once, for the one-shot commands
 * (`check-config`, `keys`): the YAML under TESSERA_CONFIG, or — with
 * TESSERA_CONFIG_SOURCE=kubernetes — one list of the namespace's Tenant resources, each
 * validated as the running issuer validates it. Nothing is watched.
 *
 * @throws ConfigError for a bad file configuration or kubeconfig; Error when the API server does
 *   not answer the list within 30 s
 */
export async function readTenants(
  settings: Settings,
  env: Record<string, string | undefined>,
  jwtSecret: string | undefined,
  shortClientSecrets?: (issue: ConfigIssue) => void,
): Promise<TenantsRead> {
  if (settings.configSource === 'files') {
    const options = { env, jwtSecret, ...(shortClientSecrets ? { shortClientSecrets } : {}) }
    return { tenants: await loadConfig(settings.config, options), refused: [] }
  }
  const refused: string[] = []
  const failures: string[] = []
  // The source reports refusals and failed lists in its log; a one-shot command shows them as
  // plain lines.
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        try {
          const entry = JSON.parse(line) as {
            level?: number
            msg?: string
            problems?: unknown
            reason?: unknown
            hint?: unknown
          }
          if ((entry.level ?? 0) < 50) continue
          const message = String(entry.msg)
          const problems = Array.isArray(entry.problems) ? entry.problems.map(String) : []
          if (message.startsWith('Tenant resource refused')) refused.push(...problems)
          else {
            const reason = typeof entry.reason === 'string' ? entry.reason : message
            failures.push(typeof entry.hint === 'string' ? `${reason} (${entry.hint})` : reason)
          }
        } catch {
          failures.push(line)
        }
      }
      done()
    },
  })
  const { createKubernetesSource } = await import('../sources/kubernetes.js')
  const source = createKubernetesSource({
    namespace: settings.kubernetesNamespace,
    providerDirectory: settings.config,
    env,
    jwtSecret,
    shortClientSecrets,
    logger: createLogger('error', sink),
    watchProviders: false,
    retry: { initialMs: 500, maxMs: 2_000 },
  })
  const tenants = new Map<string, Tenant>()
  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const where = `namespace ${settings.kubernetesNamespace}`
        const seen = failures.length > 0 ? ` (last: ${failures[failures.length - 1]})` : ''
        reject(new Error(`the API server did not list the Tenant resources of ${where}${seen}`))
      }, LIST_TIMEOUT_MS)
    })
    await Promise.race([
      source.start({
        replaceAll: (all) => {
          tenants.clear()
          for (const tenant of all) tenants.set(tenant.name, tenant)
          return Promise.resolve()
        },
        update: (changes) => {
          for (const name of changes.remove) tenants.delete(name)
          for (const tenant of changes.put) tenants.set(tenant.name, tenant)
          return Promise.resolve()
        },
      }),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
    await source.close()
  }
  return { tenants: [...tenants.values()], refused }
}
