import type { Settings } from '@tessera/config-schema'
import { findConfigProblems } from './config-problems.js'

/**
 * `tessera check-config`: validates settings, every tenant file and every provider script as
 * `start` would (`--dev` for dev's defaults and rules), and prints a summary, or every problem
 * found, one line each (`file: field path: what is wrong`), then how many. With
 * TESSERA_CONFIG_SOURCE=kubernetes it lists the namespace's Tenant resources once instead, and
 * fails when any is refused.
 */
export async function checkConfigCommand(
  flagSettings: Record<string, string>,
  dev: boolean,
): Promise<number> {
  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  const { problems, settings, tenants, notes } = await findConfigProblems(
    vars,
    dev ? 'dev' : 'start',
  )
  const from = describeSource(settings)
  if (problems.length > 0) {
    const lines = [...problems, `configuration refused: ${problems.length} problem(s) in ${from}`]
    process.stderr.write(`${lines.join('\n')}\n`)
    return 1
  }
  const lines = [`configuration OK: ${tenants.length} tenant(s) from ${from}`]
  for (const tenant of tenants) {
    lines.push(
      `  ${tenant.name}: ${tenant.jwtAlgorithm}, hosts ${tenant.hosts.join(', ')}, ` +
        `${tenant.clients.length} client(s), ${tenant.providers.length} provider(s)`,
    )
  }
  // On stdout with the summary: they are what start and dev would warn about, not problems.
  for (const note of notes) lines.push(`note: ${note}`)
  await written(`${lines.join('\n')}\n`)
  return 0
}

function describeSource(settings: Settings | undefined): string {
  if (settings === undefined) return 'the environment'
  return settings.configSource === 'kubernetes'
    ? `Tenant resources in namespace ${settings.kubernetesNamespace}`
    : settings.config
}

/**
 * Writes to stdout and waits until it is out: the command exits as soon as it returns, and a
 * pipe takes ten thousand tenants' lines more slowly than they are written.
 */
function written(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()))
  })
}
