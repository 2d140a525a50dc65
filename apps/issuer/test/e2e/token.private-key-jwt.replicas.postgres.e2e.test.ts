/**
 * A client assertion is single use across replicas: two `tessera dev` processes on
 * one PostgreSQL database created for this file.
 */
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertion, assertionGrant, clientKey, writeConfig } from '../support/client-assertion.js'
import type { ClientKey } from '../support/client-assertion.js'
import { postForm } from '../support/http.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

const HOST = 'pkp.test'
// The replicas listen on different ports: the host names its port so that both issue one `iss`
// (under `dev`, a host without a port takes each replica's own).
const ISSUER = 'http://pkp.test:8443'
const CLIENT = 'c3c3c3c3-0000-4000-8000-000000000001'

describe('private_key_jwt on two replicas sharing one PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let tmp: ReturnType<typeof tempDir>
  let key: ClientKey
  let a: IssuerProcess
  let b: IssuerProcess

  beforeAll(async () => {
    key = await clientKey('ES256', 'replica-key')
    tmp = tempDir()
    const config = writeConfig(
      tmp.dir,
      `name: pkp
config:
  hosts: ['${HOST}:8443']
  providers: [providers/users.mjs]
  clients:
    - client_id: ${CLIENT}
      token_endpoint_auth_method: private_key_jwt
      jwks: {keys: [${JSON.stringify(key.jwk)}]}
      grant_types: [password]
      scopes: [read]
`,
    )
    database = await createTestDatabase()
    const vars = {
      JWT_SECRET,
      TESSERA_CONFIG: config,
      DATABASE_URL: database.url,
      // The replays here all come from one address; the client-auth throttle is tested apart.
      CLIENT_AUTH_MAX_FAILURES: '1000',
      CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: '1000',
    }
    ;[a, b] = await Promise.all([
      startIssuer({ command: 'dev', env: vars }),
      startIssuer({ command: 'dev', env: vars }),
    ])
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
    tmp?.remove()
  })

  it('refuses at replica B an assertion already used at replica A', async () => {
    const once = await assertion(key, CLIENT, ISSUER)
    expect((await postForm(a.url, HOST, assertionGrant(once))).status).toBe(200)
    expect(await postForm(b.url, HOST, assertionGrant(once))).toMatchObject({
      status: 401,
      json: {
        error: 'invalid_client',
        error_description: 'client_assertion was already used (its jti is spent)',
      },
    })
  })

  it('lets exactly one of 40 requests with one assertion, spread over both, through', async () => {
    const once = await assertion(key, CLIENT, ISSUER)
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postForm((i % 2 === 0 ? a : b).url, HOST, assertionGrant(once)),
      ),
    )
    const statuses = results.map((res) => res.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(39)
  })

  it('writes no assertion into either replica’s log', async () => {
    const once = await assertion(key, CLIENT, 'http://elsewhere.test')
    await postForm(a.url, HOST, assertionGrant(once))
    const signature = once.split('.')[2]!
    expect([...a.logs, ...b.logs].join('\n')).not.toContain(signature)
  })
})
