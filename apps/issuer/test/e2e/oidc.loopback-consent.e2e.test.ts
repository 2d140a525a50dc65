import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { pkce, readLoginPage } from '../support/oauth.js'
import { CookieJar, redirectOf, setCookie, signInWithForm, visit } from '../support/oidc.js'

const HOST = 'native.oidc.test'
const NATIVE = 'dddddddd-3333-4333-8333-333333333333'
const WEB = { id: 'eeeeeeee-3333-4333-8333-333333333333', redirectUri: 'http://localhost:9000/cb' }

function authorizeUrl(clientId: string, redirectUri: string, challenge: string, extra = {}): URL {
  const url = new URL(`http://${HOST}/authorize`)
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid profile',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  }
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return url
}

// Any program on the device can listen on a loopback port, and a loopback redirect
// URI matches at any port (RFC 8252 §7.3). With a live session, a code for such a URI waits for
// the signed-in user's click ("Continue as …") instead of going out silently.
describe('GET /authorize with a live session and a loopback redirect URI', () => {
  const issuer = useIssuer({ config: 'oidc-native' })

  /** A browser signed in as alice through the native app's form (a typed password: no page). */
  async function signedIn(): Promise<CookieJar> {
    const jar = new CookieJar()
    const url = authorizeUrl(NATIVE, 'http://127.0.0.1:50001/callback', pkce().challenge)
    const login = await signInWithForm(issuer.url, url, jar)
    expect(redirectOf(login).searchParams.get('code')).not.toBeNull()
    return jar
  }

  function csrfOf(page: HttpResponse): string {
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1]
    if (csrf === undefined) throw new Error(`no form: ${page.text.slice(0, 200)}`)
    return csrf
  }

  function postContinue(csrf: string, cookie: string | undefined): Promise<HttpResponse> {
    return send(issuer.url, {
      method: 'POST',
      path: '/authorize',
      host: HOST,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(cookie === undefined ? {} : { cookie }),
      },
      body: new URLSearchParams({ csrf_token: csrf }).toString(),
    })
  }

  it('asks "Continue as …" and sends the code only after the click', async () => {
    const jar = await signedIn()
    const { verifier, challenge } = pkce()
    const redirectUri = 'http://127.0.0.1:50002/callback'
    const page = await visit(issuer.url, authorizeUrl(NATIVE, redirectUri, challenge), jar)
    expect(page.status).toBe(200)
    expect(page.headers.location).toBeUndefined()
    expect(page.text).toContain('Continue as Alice Liddell')
    expect(page.text).toContain('Native OIDC App')
    expect(page.text).not.toContain('name="password"')
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(setCookie(page, 'tessera_login')).toMatch(/HttpOnly/)

    const res = await postContinue(csrfOf(page), jar.header())
    const location = redirectOf(res)
    expect(location.origin + location.pathname).toBe(redirectUri)
    expect(location.searchParams.get('state')).toBe('st-1')
    const tokens = await postForm(issuer.url, HOST, {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: NATIVE,
    })
    expect(tokens.status, tokens.text).toBe(200)
    const idToken = decodeJwt((tokens.json as { id_token: string }).id_token)
    expect(idToken).toMatchObject({ sub: 'user-alice', nonce: 'n-1', aud: NATIVE })
  })

  it('answers prompt=none with consent_required, without a code', async () => {
    const jar = await signedIn()
    const url = authorizeUrl(NATIVE, 'http://[::1]:50003/callback', pkce().challenge, {
      prompt: 'none',
    })
    const location = redirectOf(await visit(issuer.url, url, jar))
    expect(location.host).toBe('[::1]:50003')
    expect(location.searchParams.get('error')).toBe('consent_required')
    expect(location.searchParams.get('code')).toBeNull()
    expect(location.searchParams.get('state')).toBe('st-1')
  })

  it('refuses the click from another browser (no binding cookie) and a second post', async () => {
    const jar = await signedIn()
    const url = authorizeUrl(NATIVE, 'http://127.0.0.1:50004/callback', pkce().challenge)
    const page = await visit(issuer.url, url, jar)
    const csrf = csrfOf(page)
    // The session cookie alone, as a page of another site posting the form would send it.
    const session = `tessera_session=${jar.get('tessera_session')}`
    const foreign = await postContinue(csrf, session)
    expect(foreign.status).toBe(400)
    expect(foreign.text).toContain('belongs to another browser session')

    expect(redirectOf(await postContinue(csrf, jar.header())).searchParams.get('code')).toBeTruthy()
    const again = await postContinue(csrf, jar.header())
    expect(again.status).toBe(400)
    expect(again.text).toContain('expired or was already used')
  })

  it('shows the login form when the session ended before the click', async () => {
    const jar = await signedIn()
    const page = await visit(
      issuer.url,
      authorizeUrl(NATIVE, 'http://127.0.0.1:50005/callback', pkce().challenge),
      jar,
    )
    const bye = await visit(issuer.url, `http://${HOST}/logout`, jar)
    expect(bye.status).toBe(200)
    const res = await postContinue(csrfOf(page), jar.header())
    expect(res.status).toBe(400)
    expect(readLoginPage(res).csrfToken).not.toBe('')
    expect(res.text).toContain('Your sign-in has ended. Sign in again.')
  })

  it('gives no code for the page when another user signed in meanwhile', async () => {
    const jar = await signedIn()
    const page = await visit(
      issuer.url,
      authorizeUrl(NATIVE, 'http://127.0.0.1:50006/callback', pkce().challenge),
      jar,
    )
    expect(page.text).toContain('Continue as Alice Liddell')
    // Bob signs in in another tab of the same browser: the session is his now.
    const other = authorizeUrl(NATIVE, 'http://127.0.0.1:50007/callback', pkce().challenge, {
      prompt: 'login',
    })
    const form = await visit(issuer.url, other, jar)
    const bob = await send(issuer.url, {
      method: 'POST',
      path: '/authorize',
      host: HOST,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: jar.header()!,
      },
      body: new URLSearchParams({
        csrf_token: csrfOf(form),
        username: 'bob',
        password: 'bob-password',
      }).toString(),
    })
    jar.take(bob)
    expect(redirectOf(bob).searchParams.get('code')).not.toBeNull()
    // Alice's page, posted with the binding cookie it was shown with: no code for Bob.
    const binding = setCookie(page, 'tessera_login')!.split(';', 1)[0]!
    const cookie = `${binding}; tessera_session=${jar.get('tessera_session')}`
    const res = await postContinue(csrfOf(page), cookie)
    expect(res.status).toBe(400)
    expect(res.text).toContain('Your sign-in has ended. Sign in again.')
  })

  it('gives no code for a login form posted without a password, session or not', async () => {
    const jar = await signedIn()
    const url = authorizeUrl(NATIVE, 'http://127.0.0.1:50008/callback', pkce().challenge, {
      prompt: 'login',
    })
    const form = await visit(issuer.url, url, jar)
    expect(form.text).toContain('name="password"')
    const res = await postContinue(csrfOf(form), jar.header())
    expect(res.status).toBe(400)
    expect(res.text).toContain('Enter your username and password.')
  })

  it('still answers a web client on a fixed redirect URI at once', async () => {
    const jar = await signedIn()
    const url = authorizeUrl(WEB.id, WEB.redirectUri, pkce().challenge)
    const location = redirectOf(await visit(issuer.url, url, jar))
    expect(location.origin + location.pathname).toBe(WEB.redirectUri)
    expect(location.searchParams.get('code')).not.toBeNull()
  })
})
