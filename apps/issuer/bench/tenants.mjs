// Writes N tenant files for the start-up benchmark and for measuring by hand:
//   node bench/tenants.mjs --count 10000 --dir /tmp/tenants [--rs256 0.5] [--clients 2]
// One file per tenant (`tenants/t00042.yaml`), every other one RS256 (or the share --rs256
// gives), each with --clients clients (the first confidential, with the password grant), and one
// provider script at the top of the directory that every tenant shares. Hosts are
// `t00042.bench`; client_ids are UUIDs made from the tenant and client numbers, so two runs write
// the same files. No tenant has an OpenID client: an HS256 tenant keeps no RS256 key.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'

/** The shared provider: a plain comparison, so that start-up is not measured through scrypt. */
export const PROVIDER = `export default {
  async authenticate({ username, password }) {
    return username === 'bench' && password === 'bench' ? { sub: 'bench-user' } : null
  },
}
`

/** The client secret of every confidential client written here. */
export const CLIENT_SECRET = 'bench-secret-0123'

/** Tenant `index`'s name, host and the client_id of its client `client`. */
export function tenantName(index) {
  return `t${String(index).padStart(5, '0')}`
}
export function tenantHost(index) {
  return `${tenantName(index)}.bench`
}
export function clientId(index, client) {
  const hex = index.toString(16).padStart(8, '0')
  const c = client.toString(16).padStart(4, '0')
  return `${hex}-${c}-4000-8000-00000000b0b0`
}

/** Whether tenant `index` of `count` is RS256, spreading `share` of them evenly. */
export function isRs256(index, share) {
  return Math.floor((index + 1) * share) > Math.floor(index * share)
}

/** The YAML of tenant `index`. */
export function tenantYaml(index, { rs256, clients }) {
  const lines = [
    `name: ${tenantName(index)}`,
    'config:',
    `  hosts: [${tenantHost(index)}]`,
    ...(rs256 ? ['  jwt_algorithm: RS256'] : []),
    '  providers: [../provider.mjs]',
    '  clients:',
  ]
  for (let client = 0; client < clients; client++) {
    lines.push(`    - client_id: ${clientId(index, client)}`)
    if (client === 0) {
      lines.push(
        `      client_secret: ${CLIENT_SECRET}`,
        '      grant_types: [password, authorization_code, refresh_token, client_credentials]',
      )
    }
    lines.push(
      `      redirect_uris: [https://app${client}.${tenantHost(index)}/cb]`,
      '      scopes: [read]',
    )
  }
  return `${lines.join('\n')}\n`
}

/** Writes `count` tenants under `dir`; answers the number of RS256 ones. */
export function writeTenants(dir, { count, rs256 = 0.5, clients = 2 }) {
  mkdirSync(join(dir, 'tenants'), { recursive: true })
  writeFileSync(join(dir, 'provider.mjs'), PROVIDER)
  let rs = 0
  for (let index = 0; index < count; index++) {
    const rs256Tenant = isRs256(index, rs256)
    if (rs256Tenant) rs++
    writeFileSync(
      join(dir, 'tenants', `${tenantName(index)}.yaml`),
      tenantYaml(index, { rs256: rs256Tenant, clients }),
    )
  }
  return rs
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '1000' },
      dir: { type: 'string' },
      rs256: { type: 'string', default: '0.5' },
      clients: { type: 'string', default: '2' },
    },
  })
  if (values.dir === undefined) {
    console.error('usage: node bench/tenants.mjs --count N --dir DIR [--rs256 0.5] [--clients 2]')
    process.exit(2)
  }
  const count = Number(values.count)
  const rs = writeTenants(values.dir, {
    count,
    rs256: Number(values.rs256),
    clients: Number(values.clients),
  })
  console.log(`${count} tenants (${rs} RS256) in ${values.dir}`)
}
