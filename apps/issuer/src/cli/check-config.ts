import { formatConfigIssue, parseSettings } from '@tessera/config-schema'
import { keyEncryptionIssue } from '../key-encryption.js'
import { loadProviders } from '../providers.js'
import { readTenants } from './read-tenants.js'

/**
 * `tessera check-config`: validates settings, every tenant file and every provider script as
 * `start` would (`--dev` for dev's defaults), and prints a summary or every problem. With
 * TESSERA_CONFIG_SOURCE=kubernetes it lists the namespace's Tenant resources once instead, and
 * fails when any is refused.
 */
export async function checkConfigCommand(
  flagSettings: Record<string, string>,
  dev: boolean,
): Promise<number> {
  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  const settings = parseSettings(vars, dev ? 'dev' : 'start')
  const { tenants, refused } = await readTenants(settings, vars, settings.jwtSecret)
  await loadProviders(tenants.flatMap((tenant) => tenant.providers))
  const unsealed = keyEncryptionIssue(tenants, settings.keyEncryptionSecret, dev ? 'dev' : 'start')
  if (unsealed !== undefined) refused.push(formatConfigIssue(unsealed))
  const from =
    settings.configSource === 'kubernetes'
      ? `Tenant resources in namespace ${settings.kubernetesNamespace}`
      : settings.config
  if (refused.length > 0) {
    for (const problem of refused) process.stderr.write(`${problem}\n`)
    process.stderr.write(`configuration refused: ${refused.length} problem(s) in ${from}\n`)
    return 1
  }
  process.stdout.write(`configuration OK: ${tenants.length} tenant(s) from ${from}\n`)
  for (const tenant of tenants) {
    process.stdout.write(
      `  ${tenant.name}: ${tenant.jwtAlgorithm}, hosts ${tenant.hosts.join(', ')}, ` +
        `${tenant.clients.length} client(s), ${tenant.providers.length} provider(s)\n`,
    )
  }
  return 0
}
