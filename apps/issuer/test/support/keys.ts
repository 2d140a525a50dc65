import { decodeProtectedHeader } from 'jose'
import { expect } from 'vitest'
import { postForm } from './http.js'
import { RS } from './issuer.js'

/** An RS256 access token for alice from the basic fixture's `rs` tenant at `url`. */
export async function rsAccessToken(url: string): Promise<string> {
  const res = await postForm(url, RS.host, {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: RS.client,
    client_secret: RS.secret,
  })
  expect(res.status).toBe(200)
  return (res.json as { access_token: string }).access_token
}

/** The key that signed a fresh `rs` token: which key signs now is what rotations change. */
export async function rsTokenKid(url: string): Promise<string | undefined> {
  return decodeProtectedHeader(await rsAccessToken(url)).kid
}
