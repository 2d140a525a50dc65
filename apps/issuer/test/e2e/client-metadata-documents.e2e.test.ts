import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertion, ASSERTION_TYPE, clientKey, writeConfig } from '../support/client-assertion.js'
import type { ClientKey } from '../support/client-assertion.js'
import { json, startDocumentServer, TEST_CERT_FILE } from '../support/client-documents.js'
import type { DocumentServer } from '../support/client-documents.js'
import { send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { authorizePath, pkce, readLoginPage } from '../support/oauth.js'

const HOST = 'cimd.test'
const PLAIN_HOST = 'plain.test'
const REDIRECT = 'https://app.example/callback'

const TENANTS = `name: cimd
config:
  hosts: [${HOST}]
  providers: [providers/users.mjs]
  clients: []
  dynamic_clients:
    metadata_documents: true
    scopes: [tools:read, tools:call]
---
name: plain
config:
  hosts: [${PLAIN_HOST}]
  providers: [providers/users.mjs]
  clients: []
`

/** A document naming `clientId`, with `changes` over a public client's members. */
const documentOf = (clientId: string, changes: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'Documented Test App',
  redirect_uris: [REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  ...changes,
})

function authorize(issuer: IssuerProcess, clientId: string, host = HOST): Promise<HttpResponse> {
  return send(issuer.url, {
    host,
    path: authorizePath({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'tools:read',
      state: 'st',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }),
  })
}

/** The error page's text, its entities decoded enough to compare descriptions. */
function errorText(response: HttpResponse): string {
  expect(response.status).toBe(400)
  expect(response.headers['content-type']).toMatch(/^text\/html/)
  return response.text.replaceAll('&#39;', "'").replaceAll('&#x27;', "'")
}

const refusal = (reason: string) => `The client's metadata document cannot be used: ${reason}.`

describe('client ID metadata documents', () => {
  let docs: DocumentServer
  let allowed: IssuerProcess
  let strict: IssuerProcess
  let tmp: ReturnType<typeof tempDir>
  let key: ClientKey
  let otherKey: ClientKey

  beforeAll(async () => {
    ;[key, otherKey] = await Promise.all([clientKey('ES256', 'k1'), clientKey('ES256', 'k2')])
    docs = await startDocumentServer()
    const self = (path: string, changes?: Record<string, unknown>) =>
      docs.routes.set(path, (base) => json(documentOf(`${base}${path}`, changes)))
    self('/good.json')
    self('/strict.json')
    self('/other-id.json', { client_id: 'https://elsewhere.example/client.json' })
    self('/large.json', { padding: 'x'.repeat(6 * 1024) })
    docs.routes.set('/slow.json', (base) => (req, res) => {
      setTimeout(() => json(documentOf(`${base}/slow.json`))(req, res), 6000)
    })
    docs.routes.set('/redirect.json', (base) => (_req, res) => {
      res.writeHead(302, { location: `${base}/good.json` }).end()
    })
    docs.routes.set('/not-json.json', () => json('<html>not a document</html>'))
    self('/key-client.json', {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${docs.https}/key-client/jwks.json`,
    })
    docs.routes.set('/key-client/jwks.json', () => json({ keys: [key.jwk] }))
    tmp = tempDir()
    const config = writeConfig(tmp.dir, TENANTS)
    ;[allowed, strict] = await Promise.all([
      startIssuer({
        command: 'dev',
        config,
        vars: { FETCH_ALLOW_PRIVATE_ADDRESSES: 'true', NODE_EXTRA_CA_CERTS: TEST_CERT_FILE },
      }),
      startIssuer({ command: 'dev', config, vars: { NODE_EXTRA_CA_CERTS: TEST_CERT_FILE } }),
    ])
  })
  afterAll(async () => {
    await Promise.all([allowed?.close(), strict?.close()])
    await docs?.close()
    tmp?.remove()
  })

  it('advertises client_id_metadata_document_supported for the tenant that accepts them only', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const accepting = await send(allowed.url, { host: HOST, path })
      expect(accepting.json).toMatchObject({
        client_id_metadata_document_supported: true,
        scopes_supported: expect.arrayContaining(['tools:read', 'tools:call']),
      })
      const plain = await send(allowed.url, { host: PLAIN_HOST, path })
      expect(plain.status).toBe(200)
      expect(plain.json).not.toHaveProperty('client_id_metadata_document_supported')
    }
  })

  it('shows the login form, naming the client, for a URL client_id', async () => {
    const clientId = `${docs.https}/good.json`
    const response = await authorize(allowed, clientId)
    expect(response.status).toBe(200)
    readLoginPage(response)
    expect(response.text).toContain('Documented Test App')
    // Fetched once, then served from the cache.
    expect((await authorize(allowed, clientId)).status).toBe(200)
    expect(docs.hits.get('/good.json')).toBe(1)
    // A tenant without metadata_documents knows no such client, and fetches nothing.
    expect(errorText(await authorize(allowed, `${docs.https}/strict.json`, PLAIN_HOST))).toContain(
      'The client is not known to this server.',
    )
    expect(docs.hits.get('/strict.json')).toBeUndefined()
  })

  it.each([
    ['/other-id.json', 'its client_id differs from the URL it was fetched from'],
    ['/large.json', 'larger than 5120 bytes'],
    ['/redirect.json', 'redirects are not followed (status 302)'],
    ['/not-json.json', 'it is not JSON'],
    ['/missing.json', 'status 404, not 200'],
  ])('refuses %s on the error page: %s', async (path, reason) => {
    expect(errorText(await authorize(allowed, `${docs.https}${path}`))).toContain(refusal(reason))
  })

  it('gives up a document that takes more than 5 s', async () => {
    const started = Date.now()
    const response = await authorize(allowed, `${docs.https}/slow.json`)
    expect(Date.now() - started).toBeLessThan(5900)
    expect(errorText(response)).toContain(refusal('no complete answer within 5000 ms'))
  }, 15_000)

  it('never fetches from loopback without FETCH_ALLOW_PRIVATE_ADDRESSES', async () => {
    const response = await authorize(strict, `${docs.https}/strict.json`)
    expect(errorText(response)).toContain(
      refusal('localhost is a loopback address (127.0.0.1): refused'),
    )
    expect(docs.hits.get('/strict.json')).toBeUndefined()
    const literal = docs.https.replace('localhost', '127.0.0.1')
    expect(errorText(await authorize(strict, `${literal}/strict.json`))).toContain(
      refusal('127.0.0.1 is a loopback address (127.0.0.1): refused'),
    )
    expect(docs.hits.get('/strict.json')).toBeUndefined()
  })

  it('takes http only to loopback and only with FETCH_ALLOW_PRIVATE_ADDRESSES', async () => {
    // Without the setting an http URL names no metadata document: no client at all.
    expect(errorText(await authorize(strict, `${docs.http}/strict.json`))).toContain(
      'The client is not known to this server.',
    )
    expect(docs.hits.get('/strict.json')).toBeUndefined()
    const response = await authorize(allowed, `${docs.http}/good.json`)
    expect(response.status).toBe(200)
    expect(response.text).toContain('Documented Test App')
  })

  it('authenticates a private_key_jwt client with a key from its jwks_uri', async () => {
    const clientId = `${docs.https}/key-client.json`
    const metadata = await send(allowed.url, {
      host: HOST,
      path: '/.well-known/oauth-authorization-server',
    })
    const issuer = (metadata.json as { issuer: string }).issuer
    const introspect = async (signer: ClientKey) =>
      send(allowed.url, {
        method: 'POST',
        path: '/introspect',
        host: HOST,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: 'not-a-token',
          client_id: clientId,
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await assertion(signer, clientId, issuer),
        }).toString(),
      })
    const good = await introspect(key)
    expect(good.status).toBe(200)
    expect(good.json).toEqual({ active: false })
    expect(docs.hits.get('/key-client/jwks.json')).toBe(1)
    const wrong = await introspect(otherKey)
    expect(wrong.status).toBe(401)
    expect(wrong.json).toMatchObject({ error: 'invalid_client' })
  })

  it('refuses a metadata-document client at /token when its document cannot be used', async () => {
    const clientId = `${docs.https}/other-id.json`
    const response = await send(allowed.url, {
      method: 'POST',
      path: '/token',
      host: HOST,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code: 'nope',
        redirect_uri: REDIRECT,
        code_verifier: pkce().verifier,
      }).toString(),
    })
    expect(response.status).toBe(401)
    expect(response.json).toMatchObject({ error: 'invalid_client' })
  })
})
