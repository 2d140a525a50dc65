import { describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { HS, useIssuer } from '../support/issuer.js'
import { pkce, signIn, SPA } from '../support/oauth.js'

describe('POST /token (refresh_token)', () => {
  const clock = { now: Date.UTC(2026, 10, 22, 12) }

  const issuer = useIssuer({
    clock: () => clock.now,
    vars: { REFRESH_TOKEN_EXPIRATION_IN_HOURS: '24' },
  })

  /** Signs in with scope "read write" and returns the first refresh token. */
  async function freshRefreshToken(): Promise<string> {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge, scope: 'read write' })
    const res = await postForm(issuer.url, HS.host, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    })
    expect(res.status).toBe(200)
    return (res.json as { refresh_token: string }).refresh_token
  }

  function refresh(token: string, extra: Record<string, string> = {}): Promise<HttpResponse> {
    return postForm(issuer.url, HS.host, {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: SPA.clientId,
      ...extra,
    })
  }

  const next = (res: HttpResponse): string => (res.json as { refresh_token: string }).refresh_token

  it('returns a new refresh token on every use', async () => {
    const first = await freshRefreshToken()
    const a = await refresh(first)
    expect(a.status).toBe(200)
    expect(a.headers['cache-control']).toBe('no-store')
    expect(a.json).toMatchObject({ token_type: 'bearer', scope: 'read write' })
    expect(next(a)).not.toBe(first)
    const b = await refresh(next(a))
    expect(b.status).toBe(200)
    expect(next(b)).not.toBe(next(a))
  })

  it('revokes the whole family when a spent refresh token is reused', async () => {
    const first = await freshRefreshToken()
    const rotated = await refresh(first)
    expect(rotated.status).toBe(200)
    const reuse = await refresh(first)
    expect(reuse.status).toBe(400)
    expect(reuse.json).toEqual({
      error: 'invalid_grant',
      error_description: 'refresh token already used; the sign-in is revoked',
    })
    const live = await refresh(next(rotated))
    expect(live.status).toBe(400)
    expect(live.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('narrows the scope of the access token, and the family keeps the whole grant', async () => {
    const first = await freshRefreshToken()
    const narrow = await refresh(first, { scope: 'read' })
    expect(narrow.json).toMatchObject({ scope: 'read' })
    const whole = await refresh(next(narrow))
    expect(whole.json).toMatchObject({ scope: 'read write' })
  })

  it('refuses to widen the scope, and the token stays usable', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge, scope: 'read' })
    const token = next(
      await postForm(issuer.url, HS.host, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: SPA.redirectUri,
        code_verifier: verifier,
        client_id: SPA.clientId,
      }),
    )
    const wider = await refresh(token, { scope: 'read write' })
    expect(wider.status).toBe(400)
    expect(wider.json).toEqual({
      error: 'invalid_scope',
      error_description: 'scope not allowed for this client: write',
    })
    expect((await refresh(token)).status).toBe(200)
  })

  it('refuses a refresh token presented by another client', async () => {
    const token = await freshRefreshToken()
    const res = await postForm(issuer.url, HS.host, {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: HS.client,
      client_secret: HS.secret,
    })
    // HS.client does not list refresh_token: the grant is refused before the token is looked at.
    expect(res.json).toMatchObject({ error: 'unauthorized_client' })
    expect((await refresh(token)).status).toBe(200)
  })

  it('refuses an unknown refresh token and a missing one', async () => {
    expect((await refresh('not-a-real-token')).json).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid refresh token',
    })
    const missing = await postForm(issuer.url, HS.host, {
      grant_type: 'refresh_token',
      client_id: SPA.clientId,
    })
    expect(missing.json).toEqual({
      error: 'invalid_request',
      error_description: 'refresh_token is required',
    })
  })

  it('ends the family at its absolute expiry, however often it was refreshed', async () => {
    let token = await freshRefreshToken()
    for (let i = 0; i < 2; i++) {
      clock.now += 10 * 3_600_000
      const res = await refresh(token)
      expect(res.status).toBe(200)
      token = next(res)
    }
    clock.now += 4 * 3_600_000 + 1
    try {
      const expired = await refresh(token)
      expect(expired.status).toBe(400)
      expect(expired.json).toEqual({
        error: 'invalid_grant',
        error_description: 'refresh token revoked or expired',
      })
    } finally {
      clock.now -= 24 * 3_600_000 + 1
    }
  })

  it('lets exactly one of 20 concurrent uses of one token succeed, then revokes the family', async () => {
    const token = await freshRefreshToken()
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(token)))
    const winners = results.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    expect(results.filter((r) => r.status === 400)).toHaveLength(19)
    // The 19 losers presented a spent token: reuse revokes the family, the winner's token too.
    const after = await refresh(next(winners[0]!))
    expect(after.status).toBe(400)
    expect(after.json).toMatchObject({ error: 'invalid_grant' })
  })
})
