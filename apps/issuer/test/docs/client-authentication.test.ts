import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { writeConfig } from '../support/client-assertion.js'
import { codeBlocks, parseDocClients } from '../support/docs.js'
import { send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const DOC = fileURLToPath(new URL('../../../../docs/client-authentication.md', import.meta.url))
const text = readFileSync(DOC, 'utf8')
const blocks = (language: string): string[] => codeBlocks(text, language)

const CLIENT = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'

async function run0(): Promise<void> {
  await Promise.resolve()
}

describe('docs/client-authentication.md', () => {
  it('shows client configurations that the schema takes', () => {
    const yaml = blocks('yaml')
    expect(yaml).toHaveLength(2)
    for (const block of yaml) {
      const { clients } = parse(block) as { clients: unknown[] }
      const result = parseDocClients(
        DOC,
        clients.map((client) => ({ ...(client as object), grant_types: ['password'] })),
      )
      if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
      expect(result.tenants[0]?.clients[0]?.tokenEndpointAuthMethod).toBe('private_key_jwt')
    }
  })

  describe('the jose example, run against an issuer', () => {
    let issuer: InProcessIssuer
    let tmp: ReturnType<typeof tempDir>
    let pem: string

    beforeAll(async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
      pem = await exportPKCS8(privateKey)
      const jwk = { ...(await exportJWK(publicKey)), kid: 'key-2026-01' }
      tmp = tempDir()
      const config = writeConfig(
        tmp.dir,
        `name: acme
config:
  hosts: [acme.test]
  providers: [providers/users.mjs]
  clients:
    - client_id: ${CLIENT}
      token_endpoint_auth_method: private_key_jwt
      jwks: {keys: [${JSON.stringify(jwk)}]}
      grant_types: [client_credentials]
`,
      )
      issuer = await startIssuer({ databaseUrl: `sqlite:${tmp.dir}/tessera.db`, config })
    })
    afterAll(async () => {
      await issuer.close()
      tmp.remove()
    })

    it('gets tokens with the assertion it makes', async () => {
      const [example] = blocks('js')
      // The example's imports become parameters; the issuer is the test's, over plain http.
      const body = example!
        .replace(/^import .*$/gm, '')
        .replaceAll("'https://acme.test'", "'http://acme.test'")
      const fetch = async (
        url: string,
        init: { method: string; headers: Record<string, string>; body: URLSearchParams },
      ) => {
        const target = new URL(url)
        const res = await send(issuer.url, {
          method: init.method,
          path: target.pathname,
          host: target.host,
          headers: init.headers,
          body: init.body.toString(),
        })
        return { status: res.status, json: () => Promise.resolve(res.json) }
      }
      const env = { CLIENT_PRIVATE_KEY_PEM: pem }
      // The constructor of async functions, which has no global name.
      const prototype = Object.getPrototypeOf(run0) as { constructor: unknown }
      const AsyncFunction = prototype.constructor as new (
        ...args: string[]
      ) => (...values: unknown[]) => Promise<{ status: number; json: () => Promise<unknown> }>
      const run = new AsyncFunction(
        'randomUUID',
        'importPKCS8',
        'SignJWT',
        'fetch',
        'process',
        `${body}\nreturn response`,
      )
      const response = await run(randomUUID, importPKCS8, SignJWT, fetch, { env })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ token_type: 'bearer' })
    })
  })
})
