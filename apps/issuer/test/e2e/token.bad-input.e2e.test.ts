import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { postJson, send } from '../support/http.js'
import { HS, tempDir, useIssuer } from '../support/issuer.js'

describe('POST /token (bad input)', () => {
  const tmp = tempDir()
  const dbFile = `${tmp.dir}/tessera.db`
  afterAll(() => tmp.remove())
  const issuer = useIssuer({ databaseUrl: `sqlite:${dbFile}`, vars: { MAX_BODY_BYTES: '2048' } })

  const creds = { client_id: HS.client, client_secret: HS.secret }
  const cases: Array<[string, { type?: string; body: string | Buffer }, number, string]> = [
    [
      'malformed JSON',
      { body: '{"grant_type": "password",' },
      400,
      'the request body is not valid JSON',
    ],
    ['a JSON array', { body: '[1,2]' }, 400, 'the request body must be a JSON object'],
    [
      'a number where a string belongs',
      { body: JSON.stringify({ grant_type: 'password', username: 42, password: 'x', ...creds }) },
      400,
      'parameter "username" must be a string',
    ],
    [
      'an array where a string belongs',
      { body: JSON.stringify({ grant_type: ['password'], ...creds }) },
      400,
      'parameter "grant_type" must be a string',
    ],
    [
      'a __proto__ key',
      { body: `{"__proto__": {"admin": "true"}, "grant_type": "password"}` },
      400,
      'parameter "__proto__" is not allowed',
    ],
    [
      'a constructor key',
      { body: JSON.stringify({ constructor: 'x', grant_type: 'password' }) },
      400,
      'parameter "constructor" is not allowed',
    ],
    [
      'a wrong content type',
      { type: 'text/plain', body: 'grant_type=password' },
      400,
      'unsupported content type; send application/x-www-form-urlencoded or application/json',
    ],
    [
      'a multipart body',
      { type: 'multipart/form-data; boundary=x', body: '--x--' },
      400,
      'unsupported content type; send application/x-www-form-urlencoded or application/json',
    ],
    [
      'a body over the limit',
      { body: JSON.stringify({ grant_type: 'password', username: 'a'.repeat(4096) }) },
      413,
      'request body larger than 2048 bytes',
    ],
    ['missing fields', { body: '{}' }, 400, 'grant_type is required'],
    [
      'a missing username',
      { body: JSON.stringify({ grant_type: 'password', password: 'x', ...creds }) },
      400,
      'username is required',
    ],
  ]

  it.each(cases)('answers %s with a clean %s', async (_name, input, status, description) => {
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: HS.host,
      headers: { 'content-type': input.type ?? 'application/json' },
      body: input.body,
    })
    expect(res.status).toBe(status)
    expect(res.json).toEqual({ error: 'invalid_request', error_description: description })
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.text).not.toMatch(/at .*\.(js|ts):\d+/)
  })

  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const res = await send(issuer.url, {
      method: 'POST',
      path: '/token',
      host: HS.host,
      headers: { 'content-type': 'application/json', 'content-length': '10000000' },
      body: '{}',
    })
    expect(res.status).toBe(413)
    expect(res.json).toMatchObject({ error: 'invalid_request' })
  })

  it('answers an unknown host with 404 and a JSON error, on every path', async () => {
    for (const path of ['/token', '/.well-known/jwks.json', '/anything']) {
      const res = await postJson(issuer.url, 'evil.test', { grant_type: 'password' }, {})
      const get = await send(issuer.url, { path, host: 'evil.test' })
      for (const r of [res, get]) {
        expect(r.status).toBe(404)
        expect(r.json).toEqual({
          error: 'invalid_request',
          error_description: 'no tenant is served at this host',
        })
      }
    }
  })

  it('stored nothing for any of the refused requests', () => {
    const db = new Database(dbFile, { readonly: true })
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM throttle').get()).toEqual({ n: 0 })
      // Not even the RS256 tenant's key: keys are made on first use, and a refused
      // request uses none.
      expect(db.prepare('SELECT tenant FROM keys').all()).toEqual([])
    } finally {
      db.close()
    }
  })
})
