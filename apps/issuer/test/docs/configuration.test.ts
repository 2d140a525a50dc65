import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  ClientSchema,
  ConfigError,
  formatConfigIssue,
  loadConfig,
  TenantFileSchema,
} from '@tessera/config-schema'
import { afterEach, describe, expect, it } from 'vitest'
import { readRepoFile } from '../deploy/manifests.js'
import { codeBlocks } from '../support/docs.js'
import { FIXTURES, JWT_SECRET } from '../support/issuer.js'

const DOC = readRepoFile('docs/configuration.md')
const USERS = join(FIXTURES, 'basic', 'providers', 'users.mjs')

/** The text of one `## heading` section of the page, up to the next `## `. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}\n`)
  if (start === -1) throw new Error(`docs/configuration.md has no "## ${heading}"`)
  const end = DOC.indexOf('\n## ', start + 1)
  return DOC.slice(start, end === -1 ? undefined : end)
}

/** The first-column field names (`| \`name\` |`) of the table right after `heading`. */
function tableFields(heading: string): string[] {
  const table = section(heading)
    .split('\n\n')
    .find((part) => part.startsWith('| field'))
  if (table === undefined) throw new Error(`no field table under "## ${heading}"`)
  return [...table.matchAll(/^\| `([a-z_]+)`/gm)].map((match) => match[1]!)
}

const folders: string[] = []
function tenantsFolder(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tessera-docs-'))
  folders.push(root)
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true })
    writeFileSync(join(root, name), text)
  }
  return root
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

describe('docs/configuration.md', () => {
  it('has a row for every field of the tenant and of the client, and none that does not exist', () => {
    const tenantFields = Object.keys(TenantFileSchema.shape.config.shape).sort()
    const clientFields = Object.keys(ClientSchema.shape).sort()
    expect(tenantFields.length).toBeGreaterThanOrEqual(6)
    expect(tableFields('The tenant (`config` / `spec`)').sort()).toEqual(tenantFields)
    expect(tableFields('Clients').sort()).toEqual(clientFields)
  })

  it('loads the complete example: two tenants, one per form, with the defaults it names', async () => {
    const [example] = codeBlocks(section('A complete example'), 'yaml')
    if (example === undefined) throw new Error('no yaml block in "A complete example"')
    const root = tenantsFolder({ 'tenants/acme.yaml': example })
    for (const script of ['ldap.mjs', 'local-users.mjs']) {
      mkdirSync(join(root, 'tenants', 'providers'), { recursive: true })
      copyFileSync(USERS, join(root, 'tenants', 'providers', script))
    }
    const env = {
      ACME_JWT_SECRET: 'acme-own-secret-0123456789-abcdefghij',
      ACME_BACKOFFICE_SECRET: 'back-office-secret',
      ORDERS_API_SECRET: 'orders-api-secret',
      GLOBEX_CLI_SECRET: 'globex-cli-secret',
    }
    const [acme, globex] = await loadConfig(join(root, 'tenants'), { env, jwtSecret: undefined })

    expect(acme).toMatchObject({
      name: 'acme',
      hosts: ['auth.acme.example', 'login.acme.example'],
      jwtAlgorithm: 'HS256',
      audience: 'https://api.acme.example',
      jwtSecret: env.ACME_JWT_SECRET,
      providers: [
        join(root, 'tenants', 'providers', 'ldap.mjs'),
        join(root, 'tenants', 'providers', 'local-users.mjs'),
      ],
    })
    const [backOffice, webApp, desktop, ordersApi] = acme!.clients
    expect(backOffice).toMatchObject({
      clientSecret: 'back-office-secret',
      grantTypes: ['password'],
    })
    expect(webApp?.clientSecret).toBeUndefined()
    expect(webApp?.grantTypes).toEqual(['authorization_code', 'refresh_token'])
    expect(webApp?.introspection).toBe('own')
    expect(webApp?.scopes).toContain('openid')
    expect(webApp?.postLogoutRedirectUris).toEqual(['https://app.acme.example/signed-out'])
    expect(desktop?.postLogoutRedirectUris).toEqual([])
    expect(desktop?.redirectUris).toEqual([
      'http://127.0.0.1/callback',
      'com.example.acme:/oauth2redirect',
    ])
    expect(ordersApi).toMatchObject({ clientSecret: 'orders-api-secret', introspection: 'tenant' })
    expect(globex).toMatchObject({ name: 'globex', jwtAlgorithm: 'RS256' })
    expect(globex?.audience).toBeUndefined()
    expect(globex?.clients[0]?.clientSecret).toBe('globex-cli-secret')
  })

  it('prints exactly the problems it shows for its two broken files', async () => {
    const text = section('Validation')
    const [acmeYaml, globexYaml] = codeBlocks(text, 'yaml')
    const [output] = codeBlocks(text, 'text')
    if (acmeYaml === undefined || globexYaml === undefined || output === undefined) {
      throw new Error('the Validation section lost its two files or their output')
    }
    const root = tenantsFolder({ 'tenants/acme.yaml': acmeYaml, 'tenants/globex.yaml': globexYaml })
    copyFileSync(USERS, join(root, 'tenants', 'users.mjs'))

    const error = await loadConfig(join(root, 'tenants'), { env: {}, jwtSecret: JWT_SECRET }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(ConfigError)
    const printed = (error as ConfigError).issues.map((issue) =>
      formatConfigIssue(issue).split(`${root}/`).join(''),
    )
    // The first line is the CLI's heading; the rest is one line per problem.
    expect(printed).toEqual(output.trim().split('\n').slice(1))
  })

  it('documents a {env: VAR} secret that is refused when the variable is empty', async () => {
    const [snippet] = codeBlocks(section('Secrets from the environment: `{env: VAR}`'), 'yaml')
    const root = tenantsFolder({
      'acme.yaml': `name: acme\nconfig:\n  hosts: [acme.test]\n  providers: [${USERS}]\n${snippet!
        .split('\n')
        .map((line) => (line ? `  ${line}` : line))
        .join('\n')}`,
    })
    const load = (env: Record<string, string>) =>
      loadConfig(root, { env, jwtSecret: undefined }).then(
        (tenants) => tenants,
        (thrown: unknown) => (thrown as ConfigError).message,
      )
    expect(await load({ ACME_JWT_SECRET: '', ACME_BACKOFFICE_SECRET: 'x'.repeat(16) })).toMatch(
      /config\.jwt_secret: environment variable ACME_JWT_SECRET is not set/,
    )
    const tenants = await load({
      ACME_JWT_SECRET: 'a'.repeat(32),
      ACME_BACKOFFICE_SECRET: 'x'.repeat(16),
    })
    expect(tenants).toMatchObject([
      { jwtSecret: 'a'.repeat(32), clients: [{ clientSecret: 'x'.repeat(16) }] },
    ])
  })
})
