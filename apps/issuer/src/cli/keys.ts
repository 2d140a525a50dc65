import { randomBytes } from 'node:crypto'
import { parseSettings } from '@tessera/config-schema'
import type { Settings, Tenant } from '@tessera/config-schema'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import {
  findTenant,
  KEY_PROPAGATION_SECONDS,
  KeyAdminError,
  listTenantKeys,
  revokeTenantKey,
  rotateTenantKey,
} from '../keys/key-admin.js'
import type { KeyAdminOptions, KeyListEntry } from '../keys/key-admin.js'
import { assertConfigExists } from './config-directory.js'
import { parseCommandLine } from './flags.js'
import { HELP, UsageError, wantsHelp } from './help.js'
import { readTenants } from './read-tenants.js'

const SUBCOMMANDS = ['list', 'rotate', 'revoke'] as const
type Subcommand = (typeof SUBCOMMANDS)[number]

const FLAGS = {
  tenant: { type: 'string' },
  kid: { type: 'string' },
  json: { type: 'boolean' },
  dev: { type: 'boolean' },
  now: { type: 'boolean' },
} as const

// Which command flags each subcommand takes; a flag given to the wrong one is refused, not ignored.
const ALLOWED: Record<Subcommand, readonly string[]> = {
  list: ['tenant', 'json', 'dev'],
  rotate: ['tenant', 'dev', 'now'],
  revoke: ['tenant', 'kid', 'dev'],
}

interface Context {
  settings: Settings
  tenants: Tenant[]
  store: Store
}

/**
 * `tessera keys list|rotate|revoke`: inspects and changes the RS256 keys in the database a
 * running issuer uses. Settings come from the environment and flags as for `start`
 * (`--dev` for dev's defaults); running issuers pick changes up within their poll interval.
 */
export async function keysCommand(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args
  const isSubcommand = SUBCOMMANDS.includes(subcommand as Subcommand)
  if (isSubcommand && wantsHelp(rest)) {
    process.stdout.write(HELP[`keys ${subcommand}`] ?? '')
    return 0
  }
  if (wantsHelp(args)) {
    process.stdout.write(HELP.keys ?? '')
    return 0
  }
  if (subcommand === undefined) {
    process.stderr.write(HELP.keys ?? '')
    return 1
  }
  try {
    return await run(args)
  } catch (error) {
    if (error instanceof KeyAdminError) {
      process.stderr.write(`tessera keys: ${error.message}\n`)
      return 1
    }
    throw error
  }
}

async function run(args: string[]): Promise<number> {
  const [subcommand, ...rest] = args
  if (!SUBCOMMANDS.includes(subcommand as Subcommand)) {
    throw new UsageError(
      'keys',
      `unknown subcommand "${subcommand}"; expected list, rotate or revoke`,
    )
  }
  const command = subcommand as Subcommand
  const where = `keys ${command}`
  const { settings: flagSettings, flags } = parseCommandLine(where, rest, FLAGS)
  for (const name of Object.keys(flags)) {
    if (!ALLOWED[command].includes(name)) {
      throw new UsageError(where, `--${name} is not a flag of keys ${command}`)
    }
  }
  const tenantName = typeof flags.tenant === 'string' ? flags.tenant : undefined
  const kid = typeof flags.kid === 'string' ? flags.kid : undefined
  if (command !== 'list' && tenantName === undefined) {
    throw new UsageError(where, `needs --tenant NAME`)
  }
  if (command === 'revoke' && kid === undefined) throw new UsageError(where, 'needs --kid KID')

  const vars: Record<string, string | undefined> = { ...process.env, ...flagSettings }
  const mode = flags.dev === true ? 'dev' : 'start'
  const settings = parseSettings(vars, mode)
  assertConfigExists(settings, vars, mode, where)
  // The tenants are read for their names and algorithms only. These commands sign nothing, so a
  // missing JWT_SECRET is no reason to refuse; a throwaway value lets HS256 tenants load.
  const jwtSecret = settings.jwtSecret ?? randomBytes(32).toString('base64url')
  const { tenants, refused } = await readTenants(settings, vars, jwtSecret)
  for (const problem of refused) process.stderr.write(`tessera keys: refused: ${problem}\n`)
  const selected = tenantName === undefined ? tenants : [findTenant(tenants, tenantName)]

  const store = await openStore(settings.databaseUrl, {
    maxConnections: settings.databaseMaxConnections,
  })
  try {
    const context: Context = { settings, tenants: selected, store }
    switch (command) {
      case 'list':
        return await list(context, flags.json === true)
      case 'rotate':
        return await rotate(context, flags.now === true)
      case 'revoke':
        return await revoke(context, kid ?? '')
    }
  } finally {
    await store.close()
  }
}

function onlyTenant(context: Context): Tenant {
  const [tenant] = context.tenants
  if (tenant === undefined) throw new Error('unreachable: rotate and revoke name one tenant')
  return tenant
}

function stateText(key: KeyListEntry): string {
  if (key.state === 'retired' && key.publishedUntil !== undefined) {
    return `retired until ${key.publishedUntil}`
  }
  if (key.state === 'next' && key.signsFrom !== undefined)
    return `next, signs from ${key.signsFrom}`
  return key.state
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  )
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell.padEnd(widths?.[column] ?? 0),
        )
        .join('  '),
    )
    .map((line) => `  ${line}\n`)
    .join('')
}

async function list(context: Context, json: boolean): Promise<number> {
  const options = keyAdminOptions(context.settings, context.store)
  const perTenant = await Promise.all(
    context.tenants.map(async (tenant) => ({
      tenant,
      keys: await listTenantKeys(tenant, options),
    })),
  )
  if (json) {
    const entries = perTenant.flatMap(({ keys }) => keys)
    process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`)
    return 0
  }
  const blocks = perTenant.map(({ tenant, keys }) => {
    const title = `${tenant.name} (signs with ${tenant.jwtAlgorithm})\n`
    if (keys.length === 0) return `${title}  no keys\n`
    const rows = [['KID', 'STATE', 'CREATED', 'ALG']]
    for (const key of keys) rows.push([key.kid, stateText(key), key.createdAt, key.alg])
    return title + table(rows)
  })
  process.stdout.write(blocks.join('\n'))
  return 0
}

async function rotate(context: Context, now: boolean): Promise<number> {
  const tenant = onlyTenant(context)
  const options = keyAdminOptions(context.settings, context.store)
  const result = await rotateTenantKey(tenant, options, { now })
  let out = `tenant "${tenant.name}": new active key ${result.kid}\n`
  for (const { kid, publishedUntil } of result.retired) {
    out += `retired ${kid}: stays in the JWKS until ${publishedUntil}\n`
  }
  out +=
    result.retired.length === 0 && Date.parse(result.signsFrom) > Date.now()
      ? `published within ${KEY_PROPAGATION_SECONDS} seconds; running issuers sign with ` +
        `${result.kid} from ${result.signsFrom}, the old key until then\n`
      : `running issuers sign with ${result.kid} within ${KEY_PROPAGATION_SECONDS} seconds\n`
  process.stdout.write(out)
  return 0
}

async function revoke(context: Context, kid: string): Promise<number> {
  const tenant = onlyTenant(context)
  const result = await revokeTenantKey(
    tenant,
    kid,
    keyAdminOptions(context.settings, context.store),
  )
  if (!result.changed) {
    process.stdout.write(
      `tenant "${tenant.name}": key ${kid} was already revoked; nothing changed\n`,
    )
    return 0
  }
  let out =
    `tenant "${tenant.name}": revoked key ${kid} (was ${result.previousState}); running issuers ` +
    `drop it from the JWKS within ${KEY_PROPAGATION_SECONDS} seconds\n`
  if (result.newActiveKid !== undefined) out += `new active key: ${result.newActiveKid}\n`
  process.stdout.write(out)
  return 0
}

function keyAdminOptions(settings: Settings, store: Store): KeyAdminOptions {
  return {
    store: store.keys,
    graceMs: settings.jwksGraceHours * 3_600_000,
    now: Date.now,
    publishAheadMs: settings.keyPublishAheadSeconds * 1000,
    ...(settings.keyEncryptionSecret === undefined
      ? {}
      : { encryptionSecret: settings.keyEncryptionSecret }),
  }
}
