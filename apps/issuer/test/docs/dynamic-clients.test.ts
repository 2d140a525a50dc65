import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '@tessera/config-schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRepoFile } from '../deploy/manifests.js'
import { codeBlocks } from '../support/docs.js'
import { send } from '../support/http.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const DOC = readRepoFile('docs/dynamic-clients.md')
const ENV = { ACME_REGISTRATION_TOKEN: 'docs-registration-token-0123' }

/** The tenant the page configures, in a folder of its own with the basic fixture's users. */
function writeTenant(dir: string): string {
  const [yaml] = codeBlocks(DOC, 'yaml')
  mkdirSync(join(dir, 'providers'))
  copyFileSync(
    join(FIXTURES, 'basic', 'providers', 'users.mjs'),
    join(dir, 'providers', 'users.mjs'),
  )
  writeFileSync(join(dir, 'acme.yaml'), yaml ?? '')
  return join(dir, 'acme.yaml')
}

describe('docs/dynamic-clients.md', () => {
  const tmp = tempDir()
  let issuer: InProcessIssuer
  let file: string

  beforeAll(async () => {
    file = writeTenant(tmp.dir)
    issuer = await startIssuer({ config: file, vars: ENV })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp.remove()
  })

  it('shows a configuration that loads as it says', async () => {
    const [tenant] = await loadConfig(file, { env: ENV, jwtSecret: JWT_SECRET })
    expect(tenant?.dynamicClients).toEqual({
      registration: true,
      registrationToken: ENV.ACME_REGISTRATION_TOKEN,
      metadataDocuments: false,
      scopes: ['tools:read', 'tools:call'],
      maxRegistrations: 10_000,
    })
  })

  it('shows the answer the issuer gives to the registration it shows', async () => {
    const [curl] = codeBlocks(DOC, 'sh')
    const body = /-d '([^']+)'/.exec(curl ?? '')?.[1]
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/register',
      host: 'auth.acme.example',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${ENV.ACME_REGISTRATION_TOKEN}`,
      },
      body: body ?? '',
    })
    expect(res.status).toBe(201)
    const shown = JSON.parse(codeBlocks(DOC, 'json')[0] ?? '') as Record<string, unknown>
    const answer = res.json as Record<string, unknown>
    expect(Object.keys(answer)).toEqual(Object.keys(shown))
    for (const key of ['redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'scope'])
      expect(answer[key]).toEqual(shown[key])
  })
})
