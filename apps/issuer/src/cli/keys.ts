import { randomBytes } from 'node:crypto'
import { parseSettings } from '@tessera/config-schema'
import type { Settings, Tenant } from '@tessera/config-schema'
import { KeyError, readKeys, revokeKey, rotateKey } from '@tessera/keys'
import type { KeyInfo } from '@tessera/keys'
import { openStore } from '@tessera/store'
import type { Store } from '@tessera/store'
import { checkSettings, KEY_POLL_INTERVAL_MS } from '../issuer.js'
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
} as const

// Which command flags each subcommand takes; a flag given to the wrong one is refused, not ignored.
const ALLOWED: Record<Subcommand, readonly string[]> = {
  list: ['tenant', 'json', 'dev'],
  rotate: ['tenant', 'dev'],
  revoke: ['tenant', 'kid', 'dev'],
}

/** A request the keys cannot satisfy (unknown tenant, HS256 tenant): one line, exit 1. */
class KeysError extends Error {}

/** One row of `tessera keys list --json`. Times are ISO 8601 (UTC). */
interface KeyListEntry {
  tenant: string
  kid: string
  state: KeyInfo['state']
  createdAt: string
  retiredAt?: string
  publishedUntil?: string
  alg: KeyInfo['alg']
}

interface Context {
  settings: Settings
  tenants: Tenant[]
  store: Store
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString()
const graceMs = (settings: Settings): number => settings.jwksGraceHours * 3_600_000
const pollSeconds = KEY_POLL_INTERVAL_MS / 1000

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
    if (error instanceof KeysError) {
      process.stderr.write(`tessera keys: ${error.message}\n`)
      return 1
    }
    if (error instanceof KeyError && error.code === 'ERR_KEY_NOT_FOUND') {
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
  checkSettings(settings)
  assertConfigExists(settings, vars, mode, where)
  // The tenants are read for their names and algorithms only. These commands sign nothing, so a
  // missing JWT_SECRET is no reason to refuse; a throwaway value lets HS256 tenants load.
  const jwtSecret = settings.jwtSecret ?? randomBytes(32).toString('base64url')
  const { tenants, refused } = await readTenants(settings, vars, jwtSecret)
  for (const problem of refused) process.stderr.write(`tessera keys: refused: ${problem}\n`)
  const selected = tenantName === undefined ? tenants : [findTenant(tenants, tenantName)]

  const store = await openStore(settings.databaseUrl)
  try {
    const context: Context = { settings, tenants: selected, store }
    switch (command) {
      case 'list':
        return await list(context, flags.json === true)
      case 'rotate':
        return await rotate(context)
      case 'revoke':
        return await revoke(context, kid ?? '')
    }
  } finally {
    await store.close()
  }
}

function findTenant(tenants: readonly Tenant[], name: string): Tenant {
  const tenant = tenants.find((candidate) => candidate.name === name)
  if (tenant === undefined) {
    const known = tenants.map((candidate) => candidate.name).join(', ')
    throw new KeysError(`unknown tenant "${name}"; the configuration has: ${known}`)
  }
  return tenant
}

function onlyTenant(context: Context): Tenant {
  const [tenant] = context.tenants
  if (tenant === undefined) throw new Error('unreachable: rotate and revoke name one tenant')
  return tenant
}

function stateText(key: KeyInfo): string {
  if (key.state === 'retired' && key.publishedUntil !== undefined) {
    return `retired until ${iso(key.publishedUntil)}`
  }
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
  const { settings, store } = context
  const perTenant = await Promise.all(
    context.tenants.map(async (tenant) => ({
      tenant,
      keys: await readKeys({ tenant: tenant.name, store: store.keys, graceMs: graceMs(settings) }),
    })),
  )
  if (json) {
    const entries = perTenant.flatMap(({ keys }) =>
      keys.map((key): KeyListEntry => ({
        tenant: key.tenant,
        kid: key.kid,
        state: key.state,
        createdAt: iso(key.createdAt),
        ...(key.retiredAt === undefined ? {} : { retiredAt: iso(key.retiredAt) }),
        ...(key.publishedUntil === undefined ? {} : { publishedUntil: iso(key.publishedUntil) }),
        alg: key.alg,
      })),
    )
    process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`)
    return 0
  }
  const blocks = perTenant.map(({ tenant, keys }) => {
    const title = `${tenant.name} (signs with ${tenant.jwtAlgorithm})\n`
    if (keys.length === 0) return `${title}  no keys\n`
    const rows = [['KID', 'STATE', 'CREATED', 'ALG']]
    for (const key of keys) rows.push([key.kid, stateText(key), iso(key.createdAt), key.alg])
    return title + table(rows)
  })
  process.stdout.write(blocks.join('\n'))
  return 0
}

async function rotate(context: Context): Promise<number> {
  const { settings, store } = context
  const tenant = onlyTenant(context)
  if (tenant.jwtAlgorithm !== 'RS256') {
    throw new KeysError(
      `tenant "${tenant.name}" signs with ${tenant.jwtAlgorithm}; only RS256 keys rotate ` +
        '(set jwt_algorithm: RS256 to switch it)',
    )
  }
  const now = Date.now()
  const result = await rotateKey({
    tenant: tenant.name,
    store: store.keys,
    now: () => now,
    ...encryption(settings),
  })
  let out = `tenant "${tenant.name}": new active key ${result.kid}\n`
  for (const kid of result.retired) {
    out += `retired ${kid}: stays in the JWKS until ${iso(now + graceMs(settings))}\n`
  }
  out += `running issuers sign with ${result.kid} within ${pollSeconds} seconds\n`
  process.stdout.write(out)
  return 0
}

async function revoke(context: Context, kid: string): Promise<number> {
  const { settings, store } = context
  const tenant = onlyTenant(context)
  const result = await revokeKey({
    tenant: tenant.name,
    kid,
    algorithm: tenant.jwtAlgorithm,
    store: store.keys,
    now: Date.now,
    ...encryption(settings),
  })
  if (result.previousState === 'revoked') {
    process.stdout.write(
      `tenant "${tenant.name}": key ${kid} was already revoked; nothing changed\n`,
    )
    return 0
  }
  let out =
    `tenant "${tenant.name}": revoked key ${kid} (was ${result.previousState}); running issuers ` +
    `drop it from the JWKS within ${pollSeconds} seconds\n`
  if (result.newActiveKid !== undefined) out += `new active key: ${result.newActiveKid}\n`
  process.stdout.write(out)
  return 0
}

function encryption(settings: Settings): { encryptionSecret?: string } {
  return settings.keyEncryptionSecret === undefined
    ? {}
    : { encryptionSecret: settings.keyEncryptionSecret }
}
