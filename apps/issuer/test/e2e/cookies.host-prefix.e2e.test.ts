import { describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import { OIDC_RS, openIdAuthorizeUrl, redirectOf } from '../support/oidc.js'

// Cookie tossing: a sibling subdomain can plant an unprefixed cookie for the
// issuer's host, e.g. its own live session, and so sign the victim in as the attacker. Over
// https (here: behind TRUST_PROXY=1 with X-Forwarded-Proto: https) the session and binding
// cookies are `__Host-` prefixed, which only the issuer's own host can set, and an unprefixed
// one is ignored.
describe('session and login-binding cookies behind an https proxy', () => {
  const issuer = useIssuer({ config: 'oidc', vars: { TRUST_PROXY: '1' } })

  const app = OIDC_RS.a

  function get(url: URL, cookie: string | undefined, https: boolean): Promise<HttpResponse> {
    return send(issuer.url, {
      path: url.pathname + url.search,
      host: url.host,
      headers: {
        ...(https ? { 'x-forwarded-proto': 'https' } : {}),
        ...(cookie === undefined ? {} : { cookie }),
      },
    })
  }

  function post(
    fields: Record<string, string>,
    cookie: string,
    https: boolean,
  ): Promise<HttpResponse> {
    return send(issuer.url, {
      method: 'POST',
      path: '/authorize',
      host: OIDC_RS.host,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie,
        ...(https ? { 'x-forwarded-proto': 'https' } : {}),
      },
      body: new URLSearchParams(fields).toString(),
    })
  }

  function cookieLine(res: HttpResponse, name: string): string | undefined {
    return res.headers['set-cookie']?.find((line) => line.startsWith(`${name}=`))
  }

  function pair(line: string | undefined): string {
    if (line === undefined) throw new Error('no such cookie')
    return line.split(';', 1)[0]!
  }

  const csrfOf = (page: HttpResponse): string =>
    /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? ''

  /** Signs `username` in through the form; the binding and session `Set-Cookie` lines. */
  async function signIn(username: string, https: boolean) {
    const prefix = https ? '__Host-' : ''
    const page = await get(openIdAuthorizeUrl(OIDC_RS, app, pkce().challenge), undefined, https)
    expect(page.status).toBe(200)
    const binding = cookieLine(page, `${prefix}tessera_login`)
    const fields = {
      csrf_token: csrfOf(page),
      username,
      password: `${username}-password`,
    }
    const login = await post(fields, pair(binding), https)
    expect(login.status).toBe(303)
    return { binding, session: cookieLine(login, `${prefix}tessera_session`) }
  }

  it('names both cookies __Host- with Path=/, Secure and no Domain on https', async () => {
    const { binding, session } = await signIn('alice', true)
    for (const line of [binding, session]) {
      expect(line).toMatch(/^__Host-tessera_(login|session)=[A-Za-z0-9_-]{43}; Path=\/; /)
      expect(line).toMatch(/; SameSite=Lax; Secure; HttpOnly$/)
      expect(line).not.toMatch(/domain=/i)
    }
  })

  it('keeps the unprefixed names on plain http, host-only, HttpOnly and SameSite=Lax', async () => {
    const { binding, session } = await signIn('bob', false)
    for (const line of [binding, session]) {
      expect(line).toMatch(/^tessera_(login|session)=[A-Za-z0-9_-]{43}; Path=\/; /)
      expect(line).toMatch(/; SameSite=Lax; HttpOnly$/)
      expect(line).not.toMatch(/domain=/i)
    }
  })

  it('ignores an unprefixed session cookie planted for an https request', async () => {
    // The attacker's own live session, as a sibling subdomain would toss it in.
    const attacker = await signIn('bob', false)
    const planted = pair(attacker.session)
    const url = openIdAuthorizeUrl(OIDC_RS, app, pkce().challenge)
    // Over http the same cookie is a live session: the test plants something that works.
    expect(redirectOf(await get(url, planted, false)).searchParams.get('code')).not.toBeNull()

    const page = await get(url, planted, true)
    expect(page.status).toBe(200)
    expect(page.text).toContain('name="password"')
    const silent = openIdAuthorizeUrl(OIDC_RS, app, pkce().challenge, {
      prompt: 'none',
      nonce: 'n-1',
    })
    expect(redirectOf(await get(silent, planted, true)).searchParams.get('error')).toBe(
      'login_required',
    )

    // Next to the victim's own __Host- session, the planted one changes nothing.
    const victim = await signIn('alice', true)
    const both = `${planted}; ${pair(victim.session)}`
    const resumed = redirectOf(await get(url, both, true))
    expect(resumed.searchParams.get('code')).not.toBeNull()
  })

  it('ignores an unprefixed binding cookie planted for an https form post', async () => {
    // Login CSRF: the attacker's form and its binding value, tossed into the victim's browser.
    const page = await get(openIdAuthorizeUrl(OIDC_RS, app, pkce().challenge), undefined, false)
    const planted = pair(cookieLine(page, 'tessera_login'))
    const fields = { csrf_token: csrfOf(page), username: 'bob', password: 'bob-password' }
    const refused = await post(fields, planted, true)
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('belongs to another browser session')
    expect(cookieLine(refused, '__Host-tessera_session')).toBeUndefined()
    // The same form with the same cookie over http goes through: the refusal is the prefix's.
    expect((await post(fields, planted, false)).status).toBe(303)
  })
})
