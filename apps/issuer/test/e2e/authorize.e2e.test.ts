import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import { HS, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import {
  authorizePath,
  openLogin,
  pkce,
  readLoginPage,
  SPA,
  submitLogin,
} from '../support/oauth.js'

describe('GET /authorize and the login page', () => {
  let issuer: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  // Moved forward to expire forms without waiting.
  let skewMs = 0
  const { challenge } = pkce()
  const valid = {
    response_type: 'code',
    client_id: SPA.clientId,
    redirect_uri: SPA.redirectUri,
    scope: 'read',
    state: 'st@te with spaces/ünïcode+&=?',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }

  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      vars: { PASSWORD_MAX_FAILURES: '3' },
      clock: () => Date.now() + skewMs,
    })
  })
  afterAll(async () => {
    await issuer.close()
    tmp.remove()
  })

  it('shows a login page naming the tenant and client, with protective headers', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const { headers, text } = page.response
    expect(headers['content-type']).toBe('text/html; charset=utf-8')
    expect(headers['x-frame-options']).toBe('DENY')
    expect(headers['cache-control']).toBe('no-store')
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(headers['content-security-policy']).toContain("default-src 'none'")
    expect(headers['content-security-policy']).toContain("form-action 'self' http://localhost:9000")
    expect(page.cookie).toMatch(/^tessera_login=/)
    expect(headers['set-cookie']?.[0]).toMatch(/httponly/i)
    expect(headers['set-cookie']?.[0]).toMatch(/samesite=lax/i)
    expect(text).toContain('<label for="username">')
    expect(text).toContain('<label for="password">')
    expect(text).toContain('Test SPA')
    expect(text).toContain('<strong>hs</strong>')
    expect(text).not.toContain('<script')
  })

  it.each([
    ['an unknown client', { client_id: '99999999-9999-4999-8999-999999999999' }],
    ['a missing client_id', { client_id: undefined }],
    ['a missing redirect_uri', { redirect_uri: undefined }],
    ['a redirect_uri with an extra path', { redirect_uri: `${SPA.redirectUri}/extra` }],
    ['a redirect_uri with an extra query', { redirect_uri: `${SPA.redirectUri}?x=1` }],
    ['a redirect_uri with a fragment', { redirect_uri: `${SPA.redirectUri}#frag` }],
    ['a redirect_uri of another client', { redirect_uri: 'http://localhost:9000/cb2?tenant=hs&x' }],
  ])('answers %s with a 400 page and never redirects', async (_name, change) => {
    const res = await send(issuer.url, {
      path: authorizePath({ ...valid, ...change }),
      host: HS.host,
    })
    expect(res.status).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.text).toContain('Cannot sign in')
  })

  it.each([
    ['the implicit grant', { response_type: 'token' }, 'unsupported_response_type'],
    ['a missing response_type', { response_type: undefined }, 'invalid_request'],
    [
      'a public client without PKCE',
      { code_challenge: undefined, code_challenge_method: undefined },
      'invalid_request',
    ],
    ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without a method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['a scope outside the client', { scope: 'read admin' }, 'invalid_scope'],
    [
      'a client without the code grant',
      { client_id: HS.publicPasswordClient },
      'unauthorized_client',
    ],
  ])('redirects %s back with error, state and iss', async (_name, change, error) => {
    const res = await send(issuer.url, {
      path: authorizePath({ ...valid, ...change }),
      host: HS.host,
    })
    expect(res.status).toBe(303)
    const location = new URL(res.headers.location!)
    expect(location.origin + location.pathname).toBe(SPA.redirectUri)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('error_description')).toBeTruthy()
    expect(location.searchParams.get('state')).toBe(valid.state)
    expect(location.searchParams.get('iss')).toBe(HS.issuer)
  })

  it('signs in and redirects with code, the exact state and iss', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    expect(res.headers['cache-control']).toBe('no-store')
    const location = new URL(res.headers.location!)
    expect(location.origin + location.pathname).toBe(SPA.redirectUri)
    expect(location.searchParams.get('state')).toBe(valid.state)
    expect(location.searchParams.get('iss')).toBe(HS.issuer)
    // 256 random bits, base64url.
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('keeps a registered query in the redirect_uri', async () => {
    const page = await openLogin(issuer.url, HS.host, {
      ...valid,
      redirect_uri: 'http://localhost:9000/cb2?tenant=hs',
    })
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.headers.location).toMatch(/^http:\/\/localhost:9000\/cb2\?tenant=hs&code=/)
  })

  it('gives the same message for a wrong password and an unknown user, and keeps working', async () => {
    const messages: string[] = []
    for (const username of ['bob', 'nobody-by-this-name']) {
      const page = await openLogin(issuer.url, HS.host, valid)
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { csrf_token: page.csrfToken, username, password: 'wrong' },
        page.cookie,
      )
      expect(res.status).toBe(400)
      messages.push(/role="alert">([^<]*)</.exec(res.text)?.[1] ?? '')
      // The page comes back with a fresh form that works.
      const retry = readLoginPage(res)
      expect(retry.csrfToken).not.toBe(page.csrfToken)
    }
    expect(messages).toEqual(['Invalid username or password.', 'Invalid username or password.'])
  })

  it('refuses a missing CSRF token and a reused one', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const missing = await submitLogin(
      issuer.url,
      HS.host,
      { username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(missing.status).toBe(400)
    expect(missing.headers.location).toBeUndefined()
    expect(missing.text).toContain('missing its CSRF token')

    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    expect((await submitLogin(issuer.url, HS.host, fields, page.cookie)).status).toBe(303)
    const reused = await submitLogin(issuer.url, HS.host, fields, page.cookie)
    expect(reused.status).toBe(400)
    expect(reused.headers.location).toBeUndefined()
    expect(reused.text).toContain('expired or was already used')
  })

  it('gives exactly one of 12 concurrent posts of one form a code', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    const results = await Promise.all(
      Array.from({ length: 12 }, () => submitLogin(issuer.url, HS.host, fields, page.cookie)),
    )
    const codes = results.filter(
      (res) => res.status === 303 && new URL(res.headers.location!).searchParams.has('code'),
    )
    expect(codes).toHaveLength(1)
    for (const res of results.filter((r) => r !== codes[0])) {
      expect(res.status).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.text).toContain('expired or was already used')
    }
  })

  it('spends a form once even after a wrong password: the retry comes with a new one', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const wrong = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'bob', password: 'wrong' },
      page.cookie,
    )
    expect(wrong.status).toBe(400)
    const retry = readLoginPage(wrong)
    expect(retry.cookie).not.toBe(page.cookie)
    const replayed = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(replayed.text).toContain('expired or was already used')
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: retry.csrfToken, username: 'alice', password: 'alice-password' },
      retry.cookie,
    )
    expect(res.status).toBe(303)
  })

  it('refuses a tampered, truncated or made-up form, which leaves the real one usable', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const token = page.csrfToken
    const flip = (at: number): string =>
      token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1)
    const parts = token.split('.')
    const forged = [
      flip(token.length - 5),
      flip(token.indexOf('.', token.indexOf('.') + 1) + 3),
      flip(5),
      token.slice(0, -1),
      parts.slice(0, 4).join('.'),
      // An unprotected token with the same claims is not a seal.
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${parts[1]}.${parts[2]}`,
      'x'.repeat(4000),
      `${token}.${token}`,
    ]
    for (const csrfToken of forged) {
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { csrf_token: csrfToken, username: 'alice', password: 'alice-password' },
        page.cookie,
      )
      expect(res.status, csrfToken).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.text).toContain('expired or was already used')
    }
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: token, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
  })

  it('refuses a form sealed for another tenant', async () => {
    const page = await openLogin(issuer.url, RS.host, {
      ...valid,
      client_id: RS.client,
      code_challenge: challenge,
    })
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(400)
    expect(res.text).toContain('expired or was already used')
  })

  it('refuses a form posted after it expired (ten minutes)', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    skewMs = 600_000
    try {
      const res = await submitLogin(issuer.url, HS.host, fields, page.cookie)
      expect(res.status).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.text).toContain('expired or was already used')
    } finally {
      skewMs = 0
    }
    // Just before the end it still works.
    const fresh = await openLogin(issuer.url, HS.host, valid)
    skewMs = 598_000
    try {
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { ...fields, csrf_token: fresh.csrfToken },
        fresh.cookie,
      )
      expect(res.status).toBe(303)
    } finally {
      skewMs = 0
    }
  })

  it('never adopts a binding cookie the browser sends', async () => {
    const planted = 'tessera_login=attacker-chosen-value'
    const page = await openLogin(issuer.url, HS.host, valid, planted)
    expect(page.cookie).toMatch(/^tessera_login=[A-Za-z0-9_-]{43}$/)
    expect(page.cookie).not.toBe(planted)
    // The form is bound to the fresh value only: with the planted cookie it is refused.
    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    const refused = await submitLogin(issuer.url, HS.host, fields, planted)
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('another browser session')
    // And every page gets a new value, even when the browser sends the last one back.
    const again = await openLogin(issuer.url, HS.host, valid, page.cookie)
    expect(again.cookie).not.toBe(page.cookie)
    expect((await submitLogin(issuer.url, HS.host, fields, page.cookie)).status).toBe(303)
  })

  it('accepts a state of 1,024 characters and redirects 1,025 back as invalid_request', async () => {
    const longest = 'é'.repeat(1024)
    const { verifier, challenge: pkceChallenge } = pkce()
    const page = await openLogin(issuer.url, HS.host, {
      ...valid,
      state: longest,
      code_challenge: pkceChallenge,
    })
    const res = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    const location = new URL(res.headers.location!)
    expect(location.searchParams.get('state')).toBe(longest)
    const token = await postForm(issuer.url, HS.host, {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    })
    expect(token.status).toBe(200)

    // The costliest 1,024 characters to seal (each escaped to six bytes of JSON) still fit the
    // form and come back intact.
    const controls = '\u0001'.repeat(1024)
    const heavy = await openLogin(issuer.url, HS.host, { ...valid, state: controls })
    const back = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: heavy.csrfToken, username: 'alice', password: 'alice-password' },
      heavy.cookie,
    )
    expect(back.status).toBe(303)
    expect(new URL(back.headers.location!).searchParams.get('state')).toBe(controls)

    const tooLong = `${longest}x`
    const refused = await send(issuer.url, {
      path: authorizePath({ ...valid, state: tooLong }),
      host: HS.host,
    })
    expect(refused.status).toBe(303)
    expect(refused.headers['set-cookie']).toBeUndefined()
    const error = new URL(refused.headers.location!)
    expect(error.origin + error.pathname).toBe(SPA.redirectUri)
    expect(error.searchParams.get('error')).toBe('invalid_request')
    expect(error.searchParams.get('error_description')).toContain('1024')
    expect(error.searchParams.get('state')).toBe(tooLong)
    expect(error.searchParams.get('iss')).toBe(HS.issuer)

    // Without a trustworthy redirect_uri, the error page.
    const page400 = await send(issuer.url, {
      path: authorizePath({ ...valid, state: tooLong, redirect_uri: 'http://evil.test/cb' }),
      host: HS.host,
    })
    expect(page400.status).toBe(400)
    expect(page400.headers.location).toBeUndefined()
  })

  it('refuses a form submitted from another browser (no or another binding cookie)', async () => {
    const page = await openLogin(issuer.url, HS.host, valid)
    const other = await openLogin(issuer.url, HS.host, valid)
    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    for (const cookie of [other.cookie, undefined, 'tessera_login=']) {
      const res = await submitLogin(issuer.url, HS.host, fields, cookie)
      expect(res.status).toBe(400)
      expect(res.text).toContain('another browser session')
    }
    // Those attempts did not use the form up: its own browser still signs in with it.
    expect((await submitLogin(issuer.url, HS.host, fields, page.cookie)).status).toBe(303)
  })

  it('throttles failed sign-ins like the password grant: 429 with Retry-After', async () => {
    let page = await openLogin(issuer.url, HS.host, valid)
    for (let i = 0; i < 3; i++) {
      const res = await submitLogin(
        issuer.url,
        HS.host,
        { csrf_token: page.csrfToken, username: 'carol', password: 'wrong' },
        page.cookie,
      )
      expect(res.status).toBe(400)
      page = readLoginPage(res)
    }
    const locked = await submitLogin(
      issuer.url,
      HS.host,
      { csrf_token: page.csrfToken, username: 'carol', password: 'wrong' },
      page.cookie,
    )
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    expect(locked.text).toContain('Too many failed sign-in attempts for this user.')
  })

  it('refuses PUT with 405', async () => {
    const res = await send(issuer.url, { method: 'PUT', path: '/authorize', host: HS.host })
    expect(res.status).toBe(405)
  })
})

describe('login forms across two replicas on one database', () => {
  let a: InProcessIssuer
  let b: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  const request = (challenge: string): Record<string, string> => ({
    response_type: 'code',
    client_id: SPA.clientId,
    redirect_uri: SPA.redirectUri,
    state: 'replicas',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })

  beforeAll(async () => {
    tmp = tempDir()
    // Started together: both race to create the sealing key, and must end up with one.
    ;[a, b] = await Promise.all([
      startIssuer({ databaseUrl: `sqlite:${tmp.dir}/tessera.db` }),
      startIssuer({ databaseUrl: `sqlite:${tmp.dir}/tessera.db` }),
    ])
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    tmp.remove()
  })

  it('signs in with a form that one replica showed and the other received', async () => {
    const [fromA, fromB] = await Promise.all([
      openLogin(a.url, HS.host, request(pkce().challenge)),
      openLogin(b.url, HS.host, request(pkce().challenge)),
    ])
    for (const [page, target] of [
      [fromA, b],
      [fromB, a],
    ] as const) {
      const res = await submitLogin(
        target.url,
        HS.host,
        { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
        page.cookie,
      )
      expect(res.status).toBe(303)
      expect(new URL(res.headers.location!).searchParams.get('code')).toBeTruthy()
    }
  })

  it('gives one code for a form posted to both at once', async () => {
    const page = await openLogin(a.url, HS.host, request(pkce().challenge))
    const fields = { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' }
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        submitLogin((i % 2 === 0 ? a : b).url, HS.host, fields, page.cookie),
      ),
    )
    expect(results.filter((res) => res.status === 303)).toHaveLength(1)
    expect(results.filter((res) => res.text.includes('expired or was already used'))).toHaveLength(
      9,
    )
  })
})
