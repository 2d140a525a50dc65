import { describe, expect, it } from 'vitest'
import { OAuthError } from '../errors.js'
import { parseClientMetadata } from './metadata.js'
import { registeredClient } from './registered-client.js'

const SCOPES = ['tools:read', 'tools:call', 'openid']
const URI = 'https://app.example.com/callback'

function refusal(body: unknown): { code: string; description: string } {
  try {
    parseClientMetadata(body, SCOPES)
  } catch (error) {
    if (error instanceof OAuthError) return { code: error.code, description: error.description }
    throw error
  }
  throw new Error('accepted')
}

describe('parseClientMetadata', () => {
  it('fills in the RFC 7591 defaults and every allowed scope', () => {
    expect(parseClientMetadata({ redirect_uris: [URI] }, SCOPES)).toEqual({
      redirect_uris: [URI],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      scope: 'tools:read tools:call openid',
    })
  })

  it('narrows the scope asked to the allowed ones, in the configured order', () => {
    const metadata = parseClientMetadata(
      { redirect_uris: [URI], scope: 'admin tools:call  tools:read' },
      SCOPES,
    )
    expect(metadata.scope).toBe('tools:read tools:call')
  })

  it('keeps the descriptive fields, ignores unknown ones and treats null as absent', () => {
    const metadata = parseClientMetadata(
      {
        redirect_uris: ['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        client_name: 'Example',
        client_uri: 'https://example.com',
        software_id: 'example-app',
        software_version: '1.2.3',
        logo_uri: 'https://example.com/logo.png',
        jwks_uri: 'https://example.com/jwks',
        tos_uri: null,
        scope: null,
      },
      SCOPES,
    )
    expect(metadata).toEqual({
      redirect_uris: ['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'tools:read tools:call openid',
      client_name: 'Example',
      client_uri: 'https://example.com',
      software_id: 'example-app',
      software_version: '1.2.3',
    })
  })

  it.each([
    [{}, 'redirect_uris is required for the authorization_code grant'],
    [{ redirect_uris: [] }, 'redirect_uris: must list at least one redirect URI'],
    [{ redirect_uris: URI }, 'redirect_uris: must be an array of strings'],
    [{ redirect_uris: [42] }, 'redirect_uris[0]: must be a string'],
    [{ redirect_uris: [URI, URI] }, 'redirect_uris: must not list a redirect URI twice'],
    [{ redirect_uris: ['http://app.example.com/cb'] }, 'redirect_uris[0]: http is allowed only'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'redirect_uris[0]: scheme "javascript:"'],
    [{ redirect_uris: ['https://app.example.com/cb#x'] }, 'must not contain a fragment'],
    [{ redirect_uris: ['/callback'] }, 'redirect_uris[0]: must be an absolute URL'],
    [
      { redirect_uris: ['https://a.example/\ud800'] },
      'must not contain control characters or lone',
    ],
    [
      { redirect_uris: ['https://a.example/\u0001'] },
      'must not contain control characters or lone',
    ],
    [{ redirect_uris: [`https://a.example/${'x'.repeat(2000)}`] }, 'at most 2000 characters'],
  ])('refuses %j with invalid_redirect_uri', (body, description) => {
    const { code, description: actual } = refusal(body)
    expect(code).toBe('invalid_redirect_uri')
    expect(actual).toContain(description)
  })

  it('refuses metadata whose JSON would exceed 32768 characters', () => {
    const uris = Array.from({ length: 20 }, (_, i) => `https://a.example/${i}?q=${'"'.repeat(900)}`)
    expect(refusal({ redirect_uris: uris })).toEqual({
      code: 'invalid_client_metadata',
      description: 'the client metadata is too large: at most 32768 characters of JSON',
    })
  })

  it('refuses more than 20 redirect URIs', () => {
    const uris = Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`)
    expect(refusal({ redirect_uris: uris }).description).toBe(
      'redirect_uris: must list at most 20 redirect URIs',
    )
  })

  it.each([
    [[], 'the request body must be a JSON object'],
    ['text', 'the request body must be a JSON object'],
    [
      { grant_types: ['client_credentials'] },
      'grant_types[0]: "client_credentials" is not allowed',
    ],
    [{ grant_types: ['password'] }, 'grant_types[0]: "password" is not allowed'],
    [{ grant_types: 'authorization_code' }, 'grant_types: must be an array of strings'],
    [{ grant_types: ['refresh_token'] }, 'grant_types must include authorization_code'],
    [{ response_types: ['token'] }, 'response_types[0]: "token" is not supported'],
    [{ token_endpoint_auth_method: 'private_key_jwt' }, '"private_key_jwt" is not supported'],
    [{ token_endpoint_auth_method: ['none'] }, 'token_endpoint_auth_method: must be a string'],
    [{ client_name: ['x'] }, 'client_name: must be a string'],
    [{ client_name: 'a\u0000b' }, 'client_name: must not contain control characters'],
    [{ client_name: 'x'.repeat(101) }, 'client_name: must be at most 100 characters'],
    [{ software_id: 'a\udc00b' }, 'software_id: must be well-formed Unicode'],
    [{ client_uri: 'javascript:alert(1)' }, 'client_uri: must be an absolute http or https URL'],
    [{ scope: ['tools:read'] }, 'scope: must be a string of space-separated scopes'],
    [{ scope: 'admin' }, 'scope: none of the scopes asked may be registered'],
    [{ scope: 'tools:read "x"' }, 'scope: must be scope tokens'],
  ])('refuses %j with invalid_client_metadata', (fields, description) => {
    const body =
      typeof fields === 'object' && !Array.isArray(fields)
        ? { redirect_uris: [URI], ...fields }
        : fields
    const { code, description: actual } = refusal(body)
    expect(code).toBe('invalid_client_metadata')
    expect(actual).toContain(description)
  })
})

describe('registeredClient', () => {
  const record = {
    tenant: 'acme',
    clientId: '0b6c1a52-4c8e-4b59-9d0f-6f0b2a1e9c11',
    registrationTokenHash: 'ab',
    metadata: {
      redirect_uris: [URI],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'tools:read tools:call',
      client_name: 'Example',
    },
    secretHash: 'cd'.repeat(32),
    createdAt: 0,
    updatedAt: 0,
  }

  it('is the Client the registration defines, narrowed to the scopes allowed now', () => {
    expect(registeredClient(record, { scopes: ['tools:call'] })).toEqual({
      clientId: record.clientId,
      name: 'Example',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: [URI],
      postLogoutRedirectUris: [],
      scopes: ['tools:call'],
      introspection: 'own',
      tokenEndpointAuthMethod: 'client_secret_post',
      clientSecretHash: record.secretHash,
      dynamic: { kind: 'registered' },
    })
  })

  it('is undefined when no scope is allowed any more, or the row is inconsistent', () => {
    expect(registeredClient(record, { scopes: ['other'] })).toBeUndefined()
    const withoutSecret: Omit<typeof record, 'secretHash'> & { secretHash?: string } = { ...record }
    delete withoutSecret.secretHash
    expect(registeredClient(withoutSecret, { scopes: SCOPES })).toBeUndefined()
    expect(
      registeredClient({ ...record, metadata: { nonsense: 1 } }, { scopes: SCOPES }),
    ).toBeUndefined()
  })
})
