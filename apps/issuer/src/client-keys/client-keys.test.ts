import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Client } from '@tessera/config-schema'
import { ClientKeysUnavailableError } from '@tessera/grants'
import { exportJWK, generateKeyPair } from 'jose'
import type { JWK } from 'jose'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientKeys } from './client-keys.js'

describe('client keys from a jwks_uri', () => {
  let jwk: JWK
  let hits = 0
  const server = createServer((_req, res) => {
    hits += 1
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys: [jwk] }))
  })
  let uri = ''

  beforeAll(async () => {
    const { publicKey } = await generateKeyPair('ES256')
    jwk = { ...(await exportJWK(publicKey)), kid: 'k1' }
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  const client = (dynamic?: Client['dynamic']): Client => ({
    clientId:
      dynamic === undefined ? '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11' : 'https://a.example/c',
    grantTypes: ['authorization_code'],
    redirectUris: ['https://a.example/cb'],
    postLogoutRedirectUris: [],
    scopes: [],
    introspection: 'own',
    tokenEndpointAuthMethod: 'private_key_jwt',
    jwksUri: uri,
    ...(dynamic === undefined ? {} : { dynamic }),
  })
  const header = { alg: 'ES256', kid: 'k1' }
  const documentClient = () => client({ kind: 'metadata-document', host: 'a.example' })

  it("guards a metadata-document client's jwks_uri, not a configured client's", async () => {
    const reasons: unknown[] = []
    const sink = {
      write: (line: string) => reasons.push((JSON.parse(line) as { reason?: unknown }).reason),
    }
    const keys = createClientKeys(pino({ level: 'warn' }, sink), Date.now)
    await expect(keys.resolve(client(), header)).resolves.toBeDefined()
    expect(hits).toBe(1)
    // The same URI named by a metadata document: loopback and http are refused, nothing is sent.
    await expect(keys.resolve(documentClient(), header)).rejects.toBeInstanceOf(
      ClientKeysUnavailableError,
    )
    expect(reasons).toEqual(['only https URLs are fetched'])
    expect(hits).toBe(1)
  })

  it('fetches it with FETCH_ALLOW_PRIVATE_ADDRESSES', async () => {
    const keys = createClientKeys(pino({ level: 'silent' }), Date.now, {
      allowPrivateAddresses: true,
    })
    const before = hits
    await expect(keys.resolve(documentClient(), header)).resolves.toBeDefined()
    expect(hits).toBe(before + 1)
  })
})
