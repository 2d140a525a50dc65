import { join } from 'node:path'
import { MAX_CODES_PER_SESSION_AND_CLIENT } from '@tessera/grants'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { tempDir, useIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import {
  OIDC_RS,
  openIdAuthorizeUrl,
  redeemCode,
  redirectOf,
  signInOpenId,
  visit,
} from '../support/oidc.js'
import type { CookieJar, OidcClient } from '../support/oidc.js'

// Every GET /authorize that rides a live single sign-on session stores a code, and a
// cross-site page can make a signed-in browser send thousands. The codes a session holds per
// client stay bounded (the newest replace the oldest) and the newest still redeem.
describe('GET /authorize with a live session: codes bounded per session and client', () => {
  const tmp = tempDir()
  const file = join(tmp.dir, 'tessera.db')
  afterAll(() => tmp.remove())
  const issuer = useIssuer({ databaseUrl: `sqlite:${file}`, config: 'oidc' })

  /** Unconsumed codes of each client of the RS tenant, counted in the SQLite file. */
  function outstanding(): Record<string, number> {
    const db = new Database(file, { readonly: true })
    try {
      const rows = db
        .prepare(
          `SELECT client_id, COUNT(*) AS n FROM authorization_codes
           WHERE tenant = 'oidc-rs' AND consumed_at IS NULL GROUP BY client_id`,
        )
        .all() as { client_id: string; n: number }[]
      return Object.fromEntries(rows.map((row) => [row.client_id, row.n]))
    } finally {
      db.close()
    }
  }

  async function silentCodes(jar: CookieJar, app: OidcClient, count: number) {
    const codes: { code: string; verifier: string }[] = []
    for (let i = 0; i < count; i++) {
      const { verifier, challenge } = pkce()
      const res = await visit(issuer.url, openIdAuthorizeUrl(OIDC_RS, app, challenge), jar)
      const code = redirectOf(res).searchParams.get('code')
      if (code === null) throw new Error(`no code: ${res.headers.location}`)
      codes.push({ code, verifier })
    }
    return codes
  }

  it('keeps at most the newest codes of the session per client; the newest redeem', async () => {
    const { jar } = await signInOpenId(issuer.url, OIDC_RS, OIDC_RS.a)
    const codes = await silentCodes(jar, OIDC_RS.a, 200)
    const other = await silentCodes(jar, OIDC_RS.b, 3)
    expect(outstanding()).toEqual({
      [OIDC_RS.a.id]: MAX_CODES_PER_SESSION_AND_CLIENT,
      [OIDC_RS.b.id]: 3,
    })

    // The newest, and the oldest still kept (as many tabs as the bound), redeem.
    const newest = codes.at(-1)!
    const oldestKept = codes.at(-MAX_CODES_PER_SESSION_AND_CLIENT)!
    for (const { code, verifier } of [newest, oldestKept]) {
      expect(
        (await redeemCode(issuer.url, OIDC_RS, OIDC_RS.a, code, verifier)).id_token,
      ).toBeTypeOf('string')
    }
    // Another client's codes were not touched by client A's.
    const { code, verifier } = other[0]!
    expect(
      (await redeemCode(issuer.url, OIDC_RS, OIDC_RS.b, code, verifier)).access_token,
    ).toBeTypeOf('string')
    // One replaced code: invalid_grant, as any unknown code.
    const replaced = codes.at(-MAX_CODES_PER_SESSION_AND_CLIENT - 1)!
    const res = await postForm(issuer.url, OIDC_RS.host, {
      grant_type: 'authorization_code',
      code: replaced.code,
      redirect_uri: OIDC_RS.a.redirectUri,
      code_verifier: replaced.verifier,
      client_id: OIDC_RS.a.id,
      client_secret: OIDC_RS.a.secret!,
    })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_grant' })
  })
})
