import { createSecretKey } from 'node:crypto'
import { base64url, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertion,
  assertionGrant,
  ASSERTION_TYPE,
  clientKey,
  writeConfig,
} from '../support/client-assertion.js'
import type { ClientKey } from '../support/client-assertion.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const HOST = 'pk.test'
const ISSUER = 'http://pk.test'
const KEY_CLIENT = 'a1a1a1a1-0000-4000-8000-000000000001'
const SECRET_CLIENT = 'a1a1a1a1-0000-4000-8000-000000000002'
const SECRET = 'pk-client-secret'

describe('private_key_jwt client authentication (RFC 7523), inline jwks', () => {
  let issuer: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  let rsa: ClientKey
  let ec: ClientKey
  let ps: ClientKey
  let stranger: ClientKey

  beforeAll(async () => {
    ;[rsa, ec, ps, stranger] = await Promise.all([
      clientKey('RS256', 'rsa-1'),
      clientKey('ES256', 'ec-1'),
      clientKey('PS256', 'ps-1'),
      clientKey('RS256', 'rsa-1'),
    ])
    tmp = tempDir()
    const jwks = JSON.stringify({ keys: [rsa.jwk, ec.jwk, ps.jwk] })
    const config = writeConfig(
      tmp.dir,
      `name: pk
config:
  hosts: [${HOST}]
  providers: [providers/users.mjs]
  clients:
    - client_id: ${KEY_CLIENT}
      token_endpoint_auth_method: private_key_jwt
      jwks: ${jwks}
      grant_types: [password]
      scopes: [read]
      introspection: tenant
    - client_id: ${SECRET_CLIENT}
      client_secret: ${SECRET}
      grant_types: [password]
      scopes: [read]
`,
    )
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      config,
      // Every broken assertion here comes from one address; the throttle that would refuse the
      // 21st has its own tests (client-auth.throttle.e2e.test.ts).
      vars: { CLIENT_AUTH_MAX_FAILURES: '1000', CLIENT_AUTH_MAX_FAILURES_PER_ADDRESS: '1000' },
    })
  })
  afterAll(async () => {
    await issuer.close()
    tmp.remove()
  })

  const token = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    postForm(issuer.url, HOST, params, headers)
  const post = (path: string, params: Record<string, string>) =>
    send(issuer.url, {
      method: 'POST',
      path,
      host: HOST,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    })
  const refused = (description: string) => ({
    status: 401,
    json: { error: 'invalid_client', error_description: description },
  })

  it('issues tokens to an assertion signed RS256, ES256 or PS256', async () => {
    for (const key of [rsa, ec, ps]) {
      const res = await token(assertionGrant(await assertion(key, KEY_CLIENT, ISSUER)))
      expect(res.status, key.alg).toBe(200)
      expect(res.json).toMatchObject({ token_type: 'bearer', scope: 'read' })
      expect(res.headers['cache-control']).toBe('no-store')
    }
  })

  it('takes the issuer URL, the token endpoint, or a list holding one, as aud', async () => {
    for (const aud of [ISSUER, `${ISSUER}/token`, ['https://other.test', `${ISSUER}/token`]]) {
      const res = await token(assertionGrant(await assertion(ec, KEY_CLIENT, aud)))
      expect(res.status, JSON.stringify(aud)).toBe(200)
    }
    // The client_id parameter is optional, and must name the same client when sent.
    const named = await token({
      ...assertionGrant(await assertion(ec, KEY_CLIENT, ISSUER)),
      client_id: KEY_CLIENT,
    })
    expect(named.status).toBe(200)
  })

  it('refuses each broken claim with invalid_client saying which', async () => {
    const now = Math.floor(Date.now() / 1000)
    const cases: [Record<string, unknown>, string][] = [
      [{ iss: SECRET_CLIENT }, 'client_assertion iss and sub must both be the client_id'],
      [
        { aud: `${ISSUER}/revoke` },
        'client_assertion aud must be the issuer URL or the token endpoint URL',
      ],
      [
        { aud: 'http://other.test' },
        'client_assertion aud must be the issuer URL or the token endpoint URL',
      ],
      [{ aud: undefined }, 'client_assertion aud must be the issuer URL or the token endpoint URL'],
      [{ exp: undefined }, 'client_assertion must have an exp claim'],
      [{ exp: now + 600 }, 'client_assertion exp must be at most 300 seconds ahead'],
      [{ exp: now - 120, iat: now - 180 }, 'client_assertion has expired'],
      [{ nbf: now + 120 }, 'client_assertion is not valid yet (nbf)'],
      [{ iat: now + 120 }, 'client_assertion iat is in the future'],
      [{ jti: undefined }, 'client_assertion must have a jti claim of 1 to 256 characters'],
      [{ jti: 'j'.repeat(300) }, 'client_assertion must have a jti claim of 1 to 256 characters'],
      [{ exp: 'soon' }, 'client_assertion exp claim is invalid'],
    ]
    for (const [claims, description] of cases) {
      const res = await token(assertionGrant(await assertion(rsa, KEY_CLIENT, ISSUER, claims)))
      expect(res, JSON.stringify(claims)).toMatchObject(refused(description))
    }
    // A sub that names another client than client_id, or than iss.
    const otherSub = await assertion(rsa, KEY_CLIENT, ISSUER, { sub: SECRET_CLIENT })
    expect(await token({ ...assertionGrant(otherSub), client_id: KEY_CLIENT })).toMatchObject(
      refused('client_id differs from the sub of client_assertion'),
    )
    expect(await token(assertionGrant(otherSub))).toMatchObject(
      refused('client authentication failed: this client does not use private_key_jwt'),
    )
  })

  it('refuses alg none, HS256 keyed with the public key, and a key that is not the client’s', async () => {
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: KEY_CLIENT, sub: KEY_CLIENT, aud: ISSUER, exp: now + 60, jti: 'x-1' }
    const unsigned = [
      base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' })),
      base64url.encode(JSON.stringify(claims)),
      '',
    ].join('.')
    expect(await token(assertionGrant(unsigned))).toMatchObject(
      refused('client_assertion alg must be one of RS256, ES256, PS256'),
    )
    // The classic confusion: the RSA public key's own bytes used as an HMAC secret.
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
      .sign(createSecretKey(Buffer.from(JSON.stringify(rsa.jwk))))
    expect(await token(assertionGrant(confused))).toMatchObject(
      refused('client_assertion alg must be one of RS256, ES256, PS256'),
    )
    // Same kid, another key pair: the signature is what decides.
    expect(
      await token(assertionGrant(await assertion(stranger, KEY_CLIENT, ISSUER))),
    ).toMatchObject(refused('client_assertion signature does not verify'))
    expect(
      await token(assertionGrant(await assertion(rsa, KEY_CLIENT, ISSUER, {}, { kid: 'nope' }))),
    ).toMatchObject(refused('no key of the client matches the client_assertion header (kid, alg)'))
    // An ES256 header over an RSA kid finds no key of that type.
    const tampered = await assertion(ec, KEY_CLIENT, ISSUER, {}, { kid: rsa.kid })
    expect((await token(assertionGrant(tampered))).status).toBe(401)
    expect(await token(assertionGrant('x'.repeat(9000)))).toMatchObject(
      refused('client_assertion is longer than 8192 characters'),
    )
  })

  it('accepts an assertion once: a replay is refused', async () => {
    const once = await assertion(ec, KEY_CLIENT, ISSUER)
    expect((await token(assertionGrant(once))).status).toBe(200)
    expect(await token(assertionGrant(once))).toMatchObject(
      refused('client_assertion was already used (its jti is spent)'),
    )
  })

  it('lets exactly one of 50 parallel requests with one assertion through', async () => {
    const once = await assertion(rsa, KEY_CLIENT, ISSUER)
    const results = await Promise.all(Array.from({ length: 50 }, () => token(assertionGrant(once))))
    const statuses = results.map((res) => res.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(49)
  })

  it('never falls back to a secret, and a secret client cannot send an assertion', async () => {
    const password = { grant_type: 'password', username: 'alice', password: 'alice-password' }
    const mustSign = refused('client authentication failed: this client must use private_key_jwt')
    expect(await token({ ...password, client_id: KEY_CLIENT, client_secret: 'x' })).toMatchObject(
      mustSign,
    )
    expect(await token(password, { authorization: basicAuth(KEY_CLIENT, 'x') })).toMatchObject(
      mustSign,
    )
    expect(await token({ ...password, client_id: KEY_CLIENT })).toMatchObject(mustSign)
    const signed = await assertion(rsa, SECRET_CLIENT, ISSUER)
    expect(await token(assertionGrant(signed))).toMatchObject(
      refused('client authentication failed: this client does not use private_key_jwt'),
    )
    // Two methods at once is a malformed request (RFC 6749 §2.3).
    const both = await token(
      { ...assertionGrant(await assertion(rsa, KEY_CLIENT, ISSUER)) },
      { authorization: basicAuth(SECRET_CLIENT, SECRET) },
    )
    expect(both).toMatchObject({ status: 400, json: { error: 'invalid_request' } })
    expect(
      await token({ ...password, client_assertion_type: ASSERTION_TYPE, client_assertion: 'a' }),
    ).toMatchObject(refused('client_assertion is not a well-formed signed JWT'))
  })

  it('authenticates /introspect and /revoke, each also taking its own URL as aud', async () => {
    const issued = await token(assertionGrant(await assertion(rsa, KEY_CLIENT, ISSUER)))
    const accessToken = (issued.json as { access_token: string }).access_token
    const introspect = async (aud: string) =>
      post('/introspect', {
        token: accessToken,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await assertion(ec, KEY_CLIENT, aud),
      })
    expect(await introspect(`${ISSUER}/introspect`)).toMatchObject({
      status: 200,
      json: { active: true, client_id: KEY_CLIENT },
    })
    expect((await introspect(`${ISSUER}/revoke`)).status).toBe(401)
    const revoked = await post('/revoke', {
      token: accessToken,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await assertion(ps, KEY_CLIENT, `${ISSUER}/revoke`),
    })
    expect(revoked.status).toBe(200)
    expect(await introspect(`${ISSUER}/token`)).toMatchObject({ json: { active: false } })
    const noKey = await post('/revoke', { token: accessToken, client_id: KEY_CLIENT })
    expect(noKey.status).toBe(401)
  })

  it('lists private_key_jwt and its algorithms in the metadata', async () => {
    const res = await send(issuer.url, {
      path: '/.well-known/oauth-authorization-server',
      host: HOST,
    })
    const algs = ['RS256', 'ES256', 'PS256']
    const withKeys: unknown = expect.arrayContaining(['private_key_jwt'])
    expect(res.json).toMatchObject({
      token_endpoint_auth_methods_supported: withKeys,
      token_endpoint_auth_signing_alg_values_supported: algs,
      revocation_endpoint_auth_methods_supported: withKeys,
      revocation_endpoint_auth_signing_alg_values_supported: algs,
      introspection_endpoint_auth_methods_supported: withKeys,
      introspection_endpoint_auth_signing_alg_values_supported: algs,
    })
  })

  it('writes no assertion into the logs', async () => {
    const secretish = await assertion(rsa, KEY_CLIENT, 'http://wrong.test')
    await token(assertionGrant(secretish))
    const logs = issuer.logs.join('\n')
    expect(logs).toContain('"path":"/token"')
    expect(logs).not.toContain(secretish.split('.')[1]!)
    expect(logs).not.toContain(secretish.split('.')[2]!)
  })
})
