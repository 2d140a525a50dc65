import { describe, expect, it } from 'vitest'
import { parseConfig } from './parse-config.js'
import { JWT_SECRET } from './test-utils/config-files.js'

const CLIENT_ID = '7c6f2d0e-1b7a-4f7e-9d55-5d0a7f3e2b11'
const RSA = {
  kty: 'RSA',
  kid: 'rsa-1',
  n: 'ntkSfFQvZItX3ve5JRRGhH4vEHMcnHQ4cBSUOzXeJ2iQ0bLB509DZJv2wG4IFg2IzIL8ZK7d0R6_qKBP-V5sHZQMoFZHBjcT4AF02As-1LdFiSjXhjCRdlcGgIIM29HLKD5C0W1QqGgPvJUEh0_9lQzEozhdoFhzbdWEenot0oN8evwuGyGGynB4nTwM8NOcqgeuZoD7reSFRFOwkgwR0yenhBWj5UFOfAyYoL74uXh58JynkTwEmrFSL3HDLrbWng6jsrffiu2RS2jJcthVzEF14fbjlmGbTpmNLLFDbGKoYC2qqvEdj2hNnAjCMiZAsNEML0koGuem6smoJKbjdQ',
  e: 'AQAB',
}
const EC = {
  kty: 'EC',
  kid: 'ec-1',
  crv: 'P-256',
  x: 'tCBzFt29MIMi4RW2RdfD2_YYlwui574xxy4YgUZt34s',
  y: 'GveIyLuK3ycFCIZCi4Dz56p_YAP5BTelWgu7kSBZUSU',
}

function document(client: Record<string, unknown>) {
  return {
    name: 'acme',
    config: {
      hosts: ['acme.localhost'],
      providers: ['users.provider.mjs'],
      clients: [{ client_id: CLIENT_ID, grant_types: ['password'], ...client }],
    },
  }
}

function parse(client: Record<string, unknown>) {
  return parseConfig([{ file: 'acme.yaml', value: document(client) }], {
    env: {},
    jwtSecret: JWT_SECRET,
    fileExists: () => true,
  })
}

function problems(client: Record<string, unknown>): string[] {
  const result = parse(client)
  if (result.ok) throw new Error('expected issues')
  return result.issues.map(
    (issue) => `${issue.path.replace('config.clients.0.', '')}: ${issue.message}`,
  )
}

function parsedClient(client: Record<string, unknown>) {
  const result = parse(client)
  if (!result.ok) throw new Error(result.issues.map((issue) => issue.message).join('\n'))
  return result.tenants[0]!.clients[0]!
}

describe('parseConfig: client authentication fields', () => {
  it('maps private_key_jwt with inline keys or a jwks_uri onto the model', () => {
    expect(
      parsedClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [RSA, EC] } }),
    ).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [RSA, EC] } })
    const remote = parsedClient({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://app.acme.test/jwks.json',
    })
    expect(remote).toMatchObject({ jwksUri: 'https://app.acme.test/jwks.json' })
    expect(remote.clientSecret).toBeUndefined()
    expect(remote.jwks).toBeUndefined()
  })

  it('leaves the method out when it is not configured, and keeps an explicit one', () => {
    expect(parsedClient({ client_secret: 's'.repeat(16) }).tokenEndpointAuthMethod).toBeUndefined()
    expect(
      parsedClient({
        client_secret: 's'.repeat(16),
        token_endpoint_auth_method: 'client_secret_post',
      }).tokenEndpointAuthMethod,
    ).toBe('client_secret_post')
    expect(parsedClient({ token_endpoint_auth_method: 'none' }).tokenEndpointAuthMethod).toBe(
      'none',
    )
  })

  it('holds each method to what it needs', () => {
    expect(problems({ token_endpoint_auth_method: 'private_key_jwt' })).toEqual([
      'token_endpoint_auth_method: private_key_jwt needs jwks or jwks_uri',
    ])
    expect(
      problems({
        token_endpoint_auth_method: 'private_key_jwt',
        client_secret: 's'.repeat(16),
        jwks: { keys: [RSA] },
        jwks_uri: 'https://app.acme.test/jwks.json',
      }),
    ).toEqual([
      'client_secret: must not be set for private_key_jwt: the client signs with its key',
      'jwks_uri: give jwks or jwks_uri, not both',
    ])
    expect(problems({ token_endpoint_auth_method: 'client_secret_basic' })).toEqual([
      'token_endpoint_auth_method: client_secret_basic needs a client_secret',
    ])
    expect(problems({ token_endpoint_auth_method: 'none', client_secret: 's'.repeat(16) })).toEqual(
      ['client_secret: must not be set for token_endpoint_auth_method none (a public client)'],
    )
    expect(problems({ client_secret: 's'.repeat(16), jwks: { keys: [RSA] } })).toEqual([
      'jwks: is used only with token_endpoint_auth_method: private_key_jwt',
    ])
    expect(
      problems({ token_endpoint_auth_method: 'client_secret_jwt', client_secret: 's'.repeat(16) }),
    ).toEqual([
      'token_endpoint_auth_method: must be one of client_secret_basic, client_secret_post, private_key_jwt, none',
    ])
  })

  it('lets a private_key_jwt client use client_credentials, as a client with a secret may', () => {
    expect(
      parsedClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [EC] },
        grant_types: ['client_credentials'],
      }).grantTypes,
    ).toEqual(['client_credentials'])
  })

  it('lets a private_key_jwt client introspect the tenant, as a client with a secret may', () => {
    expect(
      parsedClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [EC] },
        introspection: 'tenant',
      }).introspection,
    ).toBe('tenant')
  })

  it('refuses private key members and symmetric keys, naming the member', () => {
    const keyed = (key: Record<string, unknown>) =>
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key] } })
    expect(keyed({ ...RSA, d: 'AQAB', p: 'AQAB', qi: 'AQAB' })).toEqual([
      'jwks.keys.0.d: is a private key member: jwks holds public keys only; remove it',
      'jwks.keys.0.p: is a private key member: jwks holds public keys only; remove it',
      'jwks.keys.0.qi: is a private key member: jwks holds public keys only; remove it',
    ])
    expect(keyed({ ...EC, d: 'AQAB' })).toEqual([
      'jwks.keys.0.d: is a private key member: jwks holds public keys only; remove it',
    ])
    expect(keyed({ kty: 'oct', k: 'c2VjcmV0' })[0]).toBe(
      'jwks.keys.0.kty: must be RSA (RS256, PS256) or EC (ES256, curve P-256); symmetric (oct) and other keys are not accepted',
    )
  })

  it('refuses malformed JSON Web Keys with the field at fault', () => {
    const keyed = (key: Record<string, unknown>) =>
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [key] } })
    expect(keyed({ kty: 'RSA', e: 'AQAB' })).toEqual(['jwks.keys.0.n: is required for kty RSA'])
    expect(keyed({ ...RSA, n: RSA.n.slice(0, 171) })).toEqual([
      'jwks.keys.0.n: must be a modulus of 2048 bits or more',
    ])
    expect(keyed({ ...RSA, n: 'not base64url!' })).toEqual([
      'jwks.keys.0.n: must be base64url (A-Z, a-z, 0-9, - and _, without padding)',
    ])
    expect(keyed({ ...EC, crv: 'P-384' })).toEqual(['jwks.keys.0.crv: must be P-256 (ES256)'])
    expect(keyed({ ...EC, x: 'AAAA' })).toEqual([
      'jwks.keys.0.x: must be 32 bytes (43 base64url characters) for P-256',
    ])
    expect(keyed({ ...RSA, alg: 'ES256' })).toEqual([
      'jwks.keys.0.alg: must be RS256 or PS256 for an RSA key',
    ])
    expect(keyed({ ...RSA, alg: 'HS256' })).toEqual([
      'jwks.keys.0.alg: must be one of RS256, ES256, PS256',
    ])
    expect(keyed({ ...RSA, use: 'enc' })).toEqual(['jwks.keys.0.use: must be sig'])
    expect(keyed({ ...EC, n: RSA.n })).toEqual(['jwks.keys.0.n: is not a member of kty EC'])
    expect(keyed({ ...EC, extra: 1 })[0]).toMatch(/^jwks\.keys\.0\.extra: unknown JWK member/)
    expect(problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: [RSA] })).toEqual([
      'jwks: must be a mapping',
    ])
  })

  it('needs distinct kids when there are several keys, and refuses a huge set', () => {
    const anonymous = { ...EC, kid: undefined }
    expect(
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [RSA, anonymous] } }),
    ).toEqual(['jwks.keys.1.kid: is required when jwks holds several keys'])
    expect(
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [RSA, RSA] } }),
    ).toEqual(['jwks.keys.1.kid: duplicate kid "rsa-1"'])
    const many = Array.from({ length: 5000 }, (_, i) => ({ ...EC, kid: `k${i}` }))
    expect(
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: many } }),
    ).toEqual(['jwks.keys: must have at most 10 items'])
    expect(problems({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } })).toEqual(
      ['jwks.keys: must hold at least one key'],
    )
    expect(
      problems({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...RSA, n: 'A'.repeat(100_000) }] },
      }),
    ).toEqual(['jwks.keys.0.n: must be at most 1366 characters'])
  })

  it('takes an https jwks_uri, and http only for loopback hosts', () => {
    const uri = (jwks_uri: unknown) =>
      parse({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri }).ok
    expect(uri('https://keys.acme.test/jwks.json')).toBe(true)
    for (const loopback of [
      'http://localhost:8080/jwks',
      'http://app.localhost/jwks',
      'http://127.0.0.1:1234/jwks',
      'http://[::1]:1234/jwks',
    ]) {
      expect(uri(loopback)).toBe(true)
    }
    const uriProblems = (jwks_uri: unknown) =>
      problems({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri })
    expect(uriProblems('http://keys.acme.test/jwks.json')).toEqual([
      'jwks_uri: must use https (http is accepted for localhost, *.localhost, 127.0.0.1 and [::1] only)',
    ])
    expect(uriProblems('http://127.0.0.1.evil.test/jwks')[0]).toMatch(/must use https/)
    expect(uriProblems('ftp://keys.acme.test/jwks.json')).toEqual([
      'jwks_uri: must be an absolute https:// URL',
    ])
    expect(uriProblems('https://user:pw@keys.acme.test/jwks.json')).toEqual([
      'jwks_uri: must not hold a user name or password',
    ])
    expect(uriProblems('https://keys.acme.test/jwks.json#x')).toEqual([
      'jwks_uri: must not contain a fragment (#)',
    ])
    expect(uriProblems(`https://keys.acme.test/${'a'.repeat(3000)}`)).toEqual([
      'jwks_uri: must be at most 2048 characters',
    ])
    expect(uriProblems(42)).toEqual(['jwks_uri: must be a string'])
  })
})
