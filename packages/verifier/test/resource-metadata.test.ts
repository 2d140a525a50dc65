import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createVerifier, renderError, VerifierError } from '../src/index.js'
import type { Verifier, VerifierOptions } from '../src/index.js'
import { protectedResourceMetadata as koaMetadata } from '../src/koa.js'
import { protectedResourceMetadata as expressMetadata } from '../src/express.js'
import { protectedResourceMetadataResponse } from '../src/fetch.js'
import { claims, SECRET, signHs256 } from './support/keys.js'
import {
  expressMetadataServer,
  fetchMetadataServer,
  koaMetadataServer,
  send,
} from './support/metadata-servers.js'
import type { Answer } from './support/metadata-servers.js'
import type { TestServer } from './support/servers.js'

const ISSUER = 'https://issuer.example.test'
const RESOURCE = 'https://mcp.example.test/mcp'
const WELL_KNOWN = '/.well-known/oauth-protected-resource'
const METADATA_URL = `https://mcp.example.test${WELL_KNOWN}/mcp`
const ADAPTERS = {
  koa: koaMetadataServer,
  express: expressMetadataServer,
  fetch: fetchMetadataServer,
}
type AdapterName = keyof typeof ADAPTERS
const NAMES = Object.keys(ADAPTERS) as AdapterName[]

function verifierWith(resourceMetadata: VerifierOptions['resourceMetadata'], audience = RESOURCE) {
  return createVerifier({ issuer: ISSUER, audience, secret: SECRET, resourceMetadata })
}

describe('the resourceMetadata option', () => {
  const refuse = (options: Partial<VerifierOptions>, message: string) =>
    expect(() => createVerifier({ issuer: ISSUER, secret: SECRET, ...options })).toThrow(
      new TypeError(message),
    )

  it('needs a resource when the audience is not one string', () => {
    const message =
      'createVerifier: options.resourceMetadata.resource: required unless audience is one string'
    refuse({ resourceMetadata: {} }, message)
    refuse({ audience: ['https://a.test', 'https://b.test'], resourceMetadata: {} }, message)
    expect(() =>
      createVerifier({
        issuer: ISSUER,
        secret: SECRET,
        audience: ['https://a.test', 'https://b.test'],
        resourceMetadata: { resource: 'https://a.test' },
      }),
    ).not.toThrow()
  })

  it('refuses an audience that is no resource URL as the default', () => {
    refuse(
      { audience: 'orders-api', resourceMetadata: {} },
      'createVerifier: options.resourceMetadata.resource: the audience "orders-api" is not an http(s) URL without query or fragment; name the resource',
    )
  })

  it('names the field that is wrong', () => {
    refuse(
      { resourceMetadata: { resource: 'https://mcp.test/?x=1' } },
      'createVerifier: options.resourceMetadata.resource: must be an absolute http(s) URL without query or fragment',
    )
    refuse(
      { resourceMetadata: { resource: RESOURCE, authorizationServers: [] } },
      'createVerifier: options.resourceMetadata.authorizationServers: must name at least one server',
    )
    refuse(
      { resourceMetadata: { resource: RESOURCE, resourceNames: 'x' } as never },
      'createVerifier: options.resourceMetadata.resourceNames: not an option',
    )
    refuse(
      { resourceMetadata: { resource: RESOURCE, bearerMethodsSupported: ['body'] } as never },
      'createVerifier: options.resourceMetadata.bearerMethodsSupported: not an option',
    )
    expect(() =>
      createVerifier({
        issuer: ISSUER,
        secret: SECRET,
        resourceMetadata: { resource: RESOURCE, scopesSupported: 'tools:call' as never },
      }),
    ).toThrow(/^createVerifier: options\.resourceMetadata\.scopesSupported: /)
  })

  it('leaves the middleware unusable without it', () => {
    const plain = createVerifier({ issuer: ISSUER, secret: SECRET })
    const message = 'the verifier was created without resourceMetadata'
    expect(() => koaMetadata(plain)).toThrow(`protectedResourceMetadata: ${message}`)
    expect(() => expressMetadata(plain)).toThrow(`protectedResourceMetadata: ${message}`)
    expect(() => protectedResourceMetadataResponse(plain, new Request(`${RESOURCE}/x`))).toThrow(
      `protectedResourceMetadataResponse: ${message}`,
    )
  })
})

describe('the metadata document', () => {
  const documentOf = async (verifier: Verifier, path = `${WELL_KNOWN}/mcp`) => {
    const response = protectedResourceMetadataResponse(
      verifier,
      new Request(`https://mcp.example.test${path}`),
    )
    return await response?.json()
  }

  it('defaults the resource to the audience and the servers to the issuers', async () => {
    const verifier = createVerifier({
      issuer: [ISSUER, 'https://other.example.test'],
      audience: RESOURCE,
      secret: SECRET,
      resourceMetadata: {},
    })
    expect(await documentOf(verifier)).toEqual({
      resource: RESOURCE,
      authorization_servers: [ISSUER, 'https://other.example.test'],
      bearer_methods_supported: ['header'],
    })
  })

  it('writes every field in snake_case', async () => {
    const verifier = verifierWith({
      resource: 'https://mcp.example.test/mcp',
      authorizationServers: ['https://login.example.test'],
      scopesSupported: ['tools:read', 'tools:call'],
      resourceName: 'Acme MCP server',
      resourceDocumentation: 'https://docs.example.test/mcp',
      resourcePolicyUri: 'https://example.test/policy',
      resourceTosUri: 'https://example.test/tos',
      dpopBoundAccessTokensRequired: false,
      tlsClientCertificateBoundAccessTokens: false,
    })
    expect(await documentOf(verifier)).toEqual({
      resource: 'https://mcp.example.test/mcp',
      authorization_servers: ['https://login.example.test'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['tools:read', 'tools:call'],
      resource_name: 'Acme MCP server',
      resource_documentation: 'https://docs.example.test/mcp',
      resource_policy_uri: 'https://example.test/policy',
      resource_tos_uri: 'https://example.test/tos',
      dpop_bound_access_tokens_required: false,
      tls_client_certificate_bound_access_tokens: false,
    })
  })

  it('has only the root form when the resource has no path', async () => {
    const verifier = verifierWith({}, 'https://api.example.test')
    expect(await documentOf(verifier, WELL_KNOWN)).toMatchObject({
      resource: 'https://api.example.test',
    })
    expect(await documentOf(verifier, `${WELL_KNOWN}/`)).toBeUndefined()
    const response = renderError(
      new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required'),
      {
        resourceMetadata: `https://api.example.test${WELL_KNOWN}`,
      },
    )
    expect(response.headers['www-authenticate']).toBe(
      `Bearer realm="api", resource_metadata="https://api.example.test${WELL_KNOWN}"`,
    )
  })
})

describe('renderError with resourceMetadata', () => {
  it('leaves out a URL it cannot quote', () => {
    const error = new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required')
    for (const bad of ['https://x.test/"', 'https://x.test/\\', 'https://x.test/é']) {
      expect(renderError(error, { resourceMetadata: bad }).headers['www-authenticate']).toBe(
        'Bearer realm="api"',
      )
    }
  })
})

describe.each(NAMES)('protectedResourceMetadata over HTTP (%s)', (name) => {
  let server: TestServer
  let token: string
  let readOnly: string
  beforeAll(async () => {
    const verifier = verifierWith({ scopesSupported: ['tools:call'], resourceName: 'Acme MCP' })
    server = await ADAPTERS[name](verifier)
    const now = Math.floor(Date.now() / 1000)
    token = await signHs256(claims(ISSUER, now, { aud: RESOURCE, scope: 'tools:call' }))
    readOnly = await signHs256(claims(ISSUER, now, { aud: RESOURCE, scope: 'tools:read' }))
  })
  afterAll(() => server.close())

  const DOCUMENT = {
    resource: RESOURCE,
    authorization_servers: [ISSUER],
    bearer_methods_supported: ['header'],
    scopes_supported: ['tools:call'],
    resource_name: 'Acme MCP',
  }

  it.each([WELL_KNOWN, `${WELL_KNOWN}/mcp`])('answers GET %s with the document', async (path) => {
    const answer = await send('GET', `${server.url}${path}`)
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual(DOCUMENT)
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    expect(answer.headers['cache-control']).toBe('public, max-age=3600')
    expect(answer.headers['access-control-allow-origin']).toBe('*')
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)))
  })

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = await send('HEAD', `${server.url}${WELL_KNOWN}/mcp`)
    const get = await send('GET', `${server.url}${WELL_KNOWN}/mcp`)
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
    expect(head.headers['content-length']).toBe(get.headers['content-length'])
    expect(head.headers['cache-control']).toBe('public, max-age=3600')
  })

  it.each([
    ['POST', WELL_KNOWN],
    ['DELETE', `${WELL_KNOWN}/mcp`],
    ['GET', `${WELL_KNOWN}/other`],
    ['GET', `${WELL_KNOWN}/mcp/more`],
    ['GET', '/.well-known/oauth-authorization-server'],
  ])('passes %s %s on', async (method, path) => {
    const answer = await send(method, `${server.url}${path}`)
    expect([answer.status, answer.body]).toEqual([404, '{"app":"not found"}'])
  })

  const challenge = (answer: Answer) => [answer.status, answer.headers['www-authenticate']]

  it('names the metadata in a 401 without a token', async () => {
    expect(challenge(await send('GET', `${server.url}/mcp`))).toEqual([
      401,
      `Bearer realm="api", resource_metadata="${METADATA_URL}"`,
    ])
  })

  it('names the metadata in a 401 for a bad token, and in a 400', async () => {
    expect(
      challenge(await send('GET', `${server.url}/mcp`, { authorization: `Bearer ${token}x` })),
    ).toEqual([
      401,
      `Bearer realm="api", error="invalid_token", error_description="The token signature is invalid", resource_metadata="${METADATA_URL}"`,
    ])
    expect(
      challenge(await send('GET', `${server.url}/mcp`, { authorization: 'Bearer ' }))[1],
    ).toMatch(
      new RegExp(
        `^Bearer realm="api", error="invalid_request", .*, resource_metadata="${METADATA_URL}"$`,
      ),
    )
  })

  it('names the scopes needed and the metadata in a 403', async () => {
    expect(
      challenge(await send('GET', `${server.url}/mcp`, { authorization: `Bearer ${readOnly}` })),
    ).toEqual([
      403,
      `Bearer realm="api", error="insufficient_scope", error_description="The token lacks a required scope", scope="tools:call", resource_metadata="${METADATA_URL}"`,
    ])
  })

  it('lets a good token through', async () => {
    const answer = await send('GET', `${server.url}/mcp`, { authorization: `Bearer ${token}` })
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { sub: 'user-1' }])
  })
})

describe('a resource path with characters a challenge cannot carry', () => {
  it('serves and names the percent-encoded form', async () => {
    const verifier = verifierWith({ resource: 'https://mcp.example.test/a"b c' })
    const server = await koaMetadataServer(verifier)
    try {
      const path = `${WELL_KNOWN}/a%22b%20c`
      expect((await send('GET', `${server.url}${path}`)).status).toBe(200)
      expect((await send('GET', `${server.url}/mcp`)).headers['www-authenticate']).toBe(
        `Bearer realm="api", resource_metadata="https://mcp.example.test${path}"`,
      )
    } finally {
      await server.close()
    }
  })
})
