import { describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { authorizePath, openLogin, pkce, submitLogin } from '../support/oauth.js'

const HOST = 'native.test'
const APP = '66666666-6666-4666-8666-666666666666'

// Native apps (RFC 8252) get a code at a loopback port chosen at run time and at a
// private-use scheme, each exactly where they asked for it.
describe('GET /authorize for native apps (RFC 8252)', () => {
  const issuer = useIssuer({ config: 'native' })

  function request(redirectUri: string, challenge: string): Record<string, string> {
    return {
      response_type: 'code',
      client_id: APP,
      redirect_uri: redirectUri,
      scope: 'read',
      state: 'native-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }
  }

  /** Signs in at `redirectUri` and answers the Location and the login page's CSP. */
  async function signInAt(
    redirectUri: string,
  ): Promise<{ location: string; csp: string; verifier: string }> {
    const { verifier, challenge } = pkce()
    const page = await openLogin(issuer.url, HOST, request(redirectUri, challenge))
    const res = await submitLogin(
      issuer.url,
      HOST,
      { csrf_token: page.csrfToken, username: 'alice', password: 'alice-password' },
      page.cookie,
    )
    expect(res.status).toBe(303)
    return {
      location: res.headers.location!,
      csp: page.response.headers['content-security-policy'] as string,
      verifier,
    }
  }

  function redeem(code: string, redirectUri: string, verifier: string) {
    return postForm(issuer.url, HOST, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: APP,
    })
  }

  it.each([
    [
      '127.0.0.1 at a port the app picked',
      'http://127.0.0.1:51234/callback',
      'http://127.0.0.1:51234',
    ],
    ['127.0.0.1 without a port', 'http://127.0.0.1/callback', 'http://127.0.0.1'],
    [
      'a registration with a port, asked at another',
      'http://127.0.0.1:9999/fixed',
      'http://127.0.0.1:9999',
    ],
    // CSP host sources cannot name an IPv6 literal: any host, at that exact port.
    ['[::1] at a port the app picked', 'http://[::1]:40000/callback', 'http://*:40000'],
  ])('delivers the code to %s and redeems it there only', async (_name, uri, source) => {
    const { location, csp, verifier } = await signInAt(uri)
    expect(csp).toContain(`form-action 'self' ${source};`)
    expect(location.startsWith(`${uri}?code=`)).toBe(true)
    const code = new URL(location).searchParams.get('code')!
    // The token request must present the very URI the code was issued to, port included.
    const portless = uri.replace(/^(http:\/\/(?:127\.0\.0\.1|\[::1\])):\d+/, '$1')
    if (portless !== uri) {
      const other = await redeem(code, portless, verifier)
      expect(other.status).toBe(400)
      expect(other.json).toMatchObject({ error: 'invalid_grant' })
    }
    const res = await redeem(code, uri, verifier)
    // The failed attempt above spends nothing: a mismatched redirect_uri is checked first.
    expect(res.status, res.text).toBe(200)
  })

  it('delivers the code to a private-use scheme, with the scheme as the CSP source', async () => {
    const uri = 'com.example.app:/oauth2redirect'
    const { location, csp, verifier } = await signInAt(uri)
    expect(csp).toContain("form-action 'self' com.example.app:;")
    expect(csp).not.toContain('null')
    expect(location.startsWith(`${uri}?code=`)).toBe(true)
    const parsed = new URL(location)
    expect(parsed.searchParams.get('state')).toBe('native-state')
    expect(parsed.searchParams.get('iss')).toBe('http://native.test')
    const res = await redeem(parsed.searchParams.get('code')!, uri, verifier)
    expect(res.status, res.text).toBe(200)
  })

  it.each([
    ['localhost at another port (RFC 8252 §8.3)', 'http://localhost:9001/cb'],
    ['a loopback URI with another path', 'http://127.0.0.1:5000/callback/other'],
    ['a loopback URI with a query added', 'http://127.0.0.1:5000/callback?x=1'],
    ['https on a loopback registration', 'https://127.0.0.1:5000/callback'],
    ['port 0', 'http://127.0.0.1:0/callback'],
    ['a port past 65535', 'http://127.0.0.1:70000/callback'],
    ['user information that names another host', 'http://127.0.0.1:80@evil.example/callback'],
    ['another private-use path', 'com.example.app:/other'],
    ['another private-use scheme', 'com.evil.app:/oauth2redirect'],
  ])('refuses %s with the error page, never redirecting', async (_name, uri) => {
    const res = await send(issuer.url, {
      path: authorizePath(request(uri, pkce().challenge)),
      host: HOST,
    })
    expect(res.status).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.text).toContain('not registered for this client')
  })
})
