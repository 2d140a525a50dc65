import { randomBytes } from 'node:crypto'
import { formatConfigIssue, parseSettings } from '@tessera/config-schema'
import type { ConfigIssue } from '@tessera/config-schema'
import { checkSettings } from '../issuer.js'
import { keepsRs256Key } from '../id-token-keys.js'
import { keyEncryptionIssue } from '../key-encryption.js'
import { loadProviders } from '../providers.js'
import { assertConfigExists } from './config-directory.js'
import { readTenants } from './read-tenants.js'

/**
 * `tessera check-config`: validates settings, every tenant file and every provider script as
 * `start` would (`--dev` for dev's defaults and rules), and prints a summary or every problem. With
 * TESSERA_CONFIG_SOURCE=kubernetes it lists the namespace's Tenant resources once instead, and
 * fails when any is refused.
 */
export async function checkConfigCommand(
  flagSettings: Record<string, string>,
  dev: boolean,
): Promise<number> {
  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  const mode = dev ? 'dev' : 'start'
  const settings = parseSettings(vars, mode)
  checkSettings(settings)
  assertConfigExists(settings, vars, mode, 'check-config')
  const notes: string[] = []
  // dev makes up a JWT_SECRET when none is set, so HS256 tenants load; --dev checks the same.
  let jwtSecret = settings.jwtSecret
  if (dev && jwtSecret === undefined) {
    jwtSecret = randomBytes(32).toString('base64url')
    notes.push('JWT_SECRET is not set: dev would use a random secret for each process')
  }
  // start refuses a short client secret like any other problem; dev serves it with a warning.
  const shortSecret = (issue: ConfigIssue): void => {
    notes.push(`${formatConfigIssue(issue)} (tessera start refuses it)`)
  }
  const { tenants, refused } = await readTenants(
    settings,
    vars,
    jwtSecret,
    dev ? shortSecret : undefined,
  )
  const rs256 = tenants.some(keepsRs256Key)
  // start refuses them (below); dev serves them with a warning, and --dev notes it.
  if (dev && rs256 && settings.keyEncryptionSecret === undefined) {
    notes.push('KEY_ENCRYPTION_SECRET is not set: RS256 private keys would be stored unencrypted')
  }
  await loadProviders(tenants.flatMap((tenant) => tenant.providers))
  const unsealed = keyEncryptionIssue(tenants, settings.keyEncryptionSecret, mode)
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

/**
 * Writes to stdout and waits until it is out: the command exits as soon as it returns, and a
 * pipe takes ten thousand tenants' lines more slowly than they are written.
 */
function written(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()))
  })
}
