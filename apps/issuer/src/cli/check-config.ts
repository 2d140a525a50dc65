import { loadConfig, parseSettings } from '@tessera/config-schema'
import { loadProviders } from '../providers.js'

/**
 * `tessera check-config`: validates settings, every tenant file and every provider script as
 * `start` would (`--dev` for dev's defaults), and prints a summary or every problem.
 */
export async function checkConfigCommand(
  flagSettings: Record<string, string>,
  dev: boolean,
): Promise<number> {
  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  const settings = parseSettings(vars, dev ? 'dev' : 'start')
  const tenants = await loadConfig(settings.config, { env: vars, jwtSecret: settings.jwtSecret })
  await loadProviders(tenants.flatMap((tenant) => tenant.providers))
  process.stdout.write(`configuration OK: ${tenants.length} tenant(s) from ${settings.config}\n`)
  for (const tenant of tenants) {
    process.stdout.write(
      `  ${tenant.name}: ${tenant.jwtAlgorithm}, hosts ${tenant.hosts.join(', ')}, ` +
        `${tenant.clients.length} client(s), ${tenant.providers.length} provider(s)\n`,
    )
  }
  return 0
}
