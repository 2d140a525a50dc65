/**
 * HTTP Basic as authlib and requests-oauthlib send it: client_id and secret joined
 * with a colon without the form-encoding of RFC 6749 §2.3.1. Both ways are accepted.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../support/client-assertion.js'
import { basicAuth, postForm, send } from '../support/http.js'
import { tempDir, useIssuer } from '../support/issuer.js'

const HOST = 'basic.test'
// Secrets as `openssl rand -base64 32` and people make them: each breaks one naive decoding.
const SECRETS = [
  'Zm9v+YmFy/YmF6+cXV4==',
  '100%-sure-of-this-one',
  'a%2Bb-and-more-text',
  'user:pass:word:long',
  'with spaces inside',
  '%zz+%41 :%-and-then-%',
]
const clientId = (index: number) => `d4d4d4d4-0000-4000-8000-00000000000${index}`

/** `Basic base64(id:secret)` without any encoding, as those libraries send it. */
function rawBasic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
}

describe('HTTP Basic without form-encoding', () => {
  const tmp = tempDir()
  afterAll(() => tmp.remove())
  const issuer = useIssuer(() => {
    const clients = SECRETS.map(
      (secret, index) => `    - client_id: ${clientId(index)}
      client_secret: ${JSON.stringify(secret)}
      grant_types: [password]
      scopes: [read]`,
    ).join('\n')
    const config = writeConfig(
      tmp.dir,
      `name: basic\nconfig:\n  hosts: [${HOST}]\n  providers: [providers/users.mjs]\n  clients:\n${clients}\n`,
    )
    return { config }
  })

  // /revoke authenticates the client and answers 200 for any token: the client check alone.
  const revoke = (authorization: string) =>
    send(issuer.url, {
      method: 'POST',
      path: '/revoke',
      host: HOST,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      body: 'token=unknown',
    })

  it('accepts every secret form-encoded and as sent', async () => {
    for (const [index, secret] of SECRETS.entries()) {
      expect((await revoke(basicAuth(clientId(index), secret))).status, `encoded ${secret}`).toBe(
        200,
      )
      expect((await revoke(rawBasic(clientId(index), secret))).status, `raw ${secret}`).toBe(200)
    }
  })

  it('refuses what matches in neither form, with a Basic challenge', async () => {
    for (const [index, wrong] of ['Zm9v YmFy/YmF6 cXV4==', '100%-sure!', 'a+b', 'user'].entries()) {
      const res = await revoke(rawBasic(clientId(index), wrong))
      expect(res, wrong).toMatchObject({ status: 401, json: { error: 'invalid_client' } })
      expect(res.headers['www-authenticate']).toMatch(/^Basic /)
    }
  })

  it('issues tokens at /token to a secret sent as requests-oauthlib sends it', async () => {
    const res = await postForm(
      issuer.url,
      HOST,
      { grant_type: 'password', username: 'alice', password: 'alice-password' },
      { authorization: rawBasic(clientId(0), SECRETS[0]!) },
    )
    expect(res).toMatchObject({ status: 200, json: { token_type: 'bearer' } })
  })
})
