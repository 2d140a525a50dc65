import { generateKeyPair, exportJWK } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  clientIdHost,
  documentClient,
  isClientIdUrl,
  parseClientDocument,
} from './client-document.js'

const URL_ID = 'https://app.example.com/oauth/client.json'
const body = (document: unknown) => Buffer.from(JSON.stringify(document))
const minimal = { client_id: URL_ID, redirect_uris: ['https://app.example.com/callback'] }

describe('isClientIdUrl', () => {
  it.each([
    'https://app.example.com/client.json',
    'https://app.example.com/a/b?v=1',
    'https://app.example.com:8443/client',
    'https://[2001:db8::1]/client',
  ])('takes %s', (url) => {
    expect(isClientIdUrl(url, false)).toBe(true)
  })

  it.each([
    ['no path', 'https://app.example.com'],
    ['only /', 'https://app.example.com/'],
    ['a fragment', 'https://app.example.com/client#x'],
    ['credentials', 'https://user:pw@app.example.com/client'],
    ['a user name', 'https://user@app.example.com/client'],
    ['a dot segment', 'https://app.example.com/a/./client'],
    ['a double-dot segment', 'https://app.example.com/a/../client'],
    ['an encoded dot segment', 'https://app.example.com/a/%2e%2E/client'],
    ['a trailing dot segment', 'https://app.example.com/client/..'],
    ['http', 'http://app.example.com/client'],
    ['http to loopback without the setting', 'http://127.0.0.1:8080/client'],
    ['another scheme', 'ftp://app.example.com/client'],
    ['an upper-case scheme', 'HTTPS://app.example.com/client'],
    ['white space', 'https://app.example.com/cli ent'],
    ['a UUID', '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'],
    ['an overlong URL', `https://app.example.com/${'a'.repeat(2100)}`],
  ])('refuses one with %s', (_why, url) => {
    expect(isClientIdUrl(url, false)).toBe(false)
  })

  it('takes http to loopback with FETCH_ALLOW_PRIVATE_ADDRESSES only', () => {
    expect(isClientIdUrl('http://127.0.0.1:8080/client', true)).toBe(true)
    expect(isClientIdUrl('http://localhost:8080/client', true)).toBe(true)
    expect(isClientIdUrl('http://[::1]:8080/client', true)).toBe(true)
    expect(isClientIdUrl('http://app.example.com/client', true)).toBe(false)
  })

  it('names the host with its port when not the default', () => {
    expect(clientIdHost('https://app.example.com/client')).toBe('app.example.com')
    expect(clientIdHost('https://app.example.com:443/client')).toBe('app.example.com')
    expect(clientIdHost('https://App.Example.com:8443/client')).toBe('app.example.com:8443')
  })
})

describe('parseClientDocument', () => {
  it('makes a public authorization-code client of a minimal document', () => {
    const document = parseClientDocument(URL_ID, body({ ...minimal, unknown_member: 1 }))
    expect(documentClient(document, ['tools:read', 'tools:call'])).toEqual({
      clientId: URL_ID,
      grantTypes: ['authorization_code'],
      redirectUris: ['https://app.example.com/callback'],
      postLogoutRedirectUris: [],
      scopes: ['tools:read', 'tools:call'],
      introspection: 'own',
      tokenEndpointAuthMethod: 'none',
      dynamic: { kind: 'metadata-document', host: 'app.example.com' },
    })
  })

  it('keeps the name, the grants, and the scopes asked for among those the tenant offers', () => {
    const document = parseClientDocument(
      URL_ID,
      body({
        ...minimal,
        client_name: 'Example app',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'tools:read admin',
      }),
    )
    expect(documentClient(document, ['tools:read', 'tools:call'])).toMatchObject({
      name: 'Example app',
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['tools:read'],
    })
  })

  it('takes private_key_jwt with jwks or jwks_uri', async () => {
    const { publicKey } = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1' }
    const inline = parseClientDocument(
      URL_ID,
      body({ ...minimal, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } }),
    )
    expect(inline).toMatchObject({
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [jwk] },
    })
    const remote = parseClientDocument(
      URL_ID,
      body({
        ...minimal,
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://app.example.com/jwks.json',
      }),
    )
    expect(remote.jwksUri).toBe('https://app.example.com/jwks.json')
  })

  it.each([
    ['not JSON', Buffer.from('<html>'), 'it is not JSON'],
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'it is not JSON'],
    ['an array', body([minimal]), 'it is not a JSON object'],
    [
      'another client_id',
      body({ ...minimal, client_id: `${URL_ID}?x` }),
      'its client_id differs from the URL it was fetched from',
    ],
    [
      'a normalised client_id',
      body({ ...minimal, client_id: URL_ID.replace('app.', 'APP.') }),
      'its client_id differs',
    ],
    ['no client_id', body({ redirect_uris: minimal.redirect_uris }), 'it has no client_id'],
    [
      'no redirect_uris',
      body({ client_id: URL_ID }),
      'redirect_uris: is required: a list of redirect URIs',
    ],
    [
      'empty redirect_uris',
      body({ ...minimal, redirect_uris: [] }),
      'redirect_uris: must list at least one redirect URI',
    ],
    [
      'a bad redirect URI',
      body({ ...minimal, redirect_uris: ['javascript:alert(1)'] }),
      'redirect_uris.0: scheme "javascript:" is not allowed',
    ],
    [
      'a redirect URI with a fragment',
      body({ ...minimal, redirect_uris: ['https://a.example/cb#x'] }),
      'redirect_uris.0: must not contain a fragment (#)',
    ],
    [
      'a repeated redirect URI',
      body({ ...minimal, redirect_uris: ['https://a.example/cb', 'https://a.example/cb'] }),
      'redirect_uris: lists a URI twice',
    ],
    [
      'client_secret',
      body({ ...minimal, client_secret: 'shh' }),
      'client_secret: must not be present in a metadata document',
    ],
    [
      'client_secret_expires_at',
      body({ ...minimal, client_secret_expires_at: 0 }),
      'client_secret_expires_at: must not be present',
    ],
    [
      'client_secret_basic',
      body({ ...minimal, token_endpoint_auth_method: 'client_secret_basic' }),
      'token_endpoint_auth_method: must be none or private_key_jwt',
    ],
    [
      'private_key_jwt without keys',
      body({ ...minimal, token_endpoint_auth_method: 'private_key_jwt' }),
      'token_endpoint_auth_method: private_key_jwt needs jwks or jwks_uri',
    ],
    [
      'jwks_uri without private_key_jwt',
      body({ ...minimal, jwks_uri: 'https://a.example/jwks' }),
      'jwks_uri: is used only with token_endpoint_auth_method private_key_jwt',
    ],
    [
      'the password grant',
      body({ ...minimal, grant_types: ['password'] }),
      'grant_types.0: must be authorization_code or refresh_token',
    ],
    [
      'the client credentials grant',
      body({ ...minimal, grant_types: ['client_credentials'] }),
      'grant_types.0: must be authorization_code or refresh_token',
    ],
    [
      'response type token',
      body({ ...minimal, response_types: ['token'] }),
      'response_types.0: must be code',
    ],
    [
      'a client_name that is no string',
      body({ ...minimal, client_name: 7 }),
      'client_name: must be a string',
    ],
  ])('refuses a document with %s', (_why, raw, reason) => {
    expect(() => parseClientDocument(URL_ID, raw)).toThrow(reason)
  })
})
