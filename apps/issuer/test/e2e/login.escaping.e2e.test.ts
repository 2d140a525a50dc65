import { describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { authorizePath, openLogin, pkce, submitLogin } from '../support/oauth.js'

const HOST = 'hostile.test'
const CLIENT = '77777777-7777-4777-8777-777777777777'

/** The page's markup, its own elements only: no value a client or a user wrote became one. */
function expectOnlyThePagesMarkup(page: string): void {
  expect(page).not.toMatch(/<script|<img|onerror=alert\(1\)>/)
  expect(page.match(/<input /g)).toHaveLength(3)
  expect(page.match(/<strong>/g)).toHaveLength(2)
}

// The sign-in pages escape by construction; a client's name and a user's input reach
// them as text, over HTTP as a browser gets them.
describe('the login page with hostile values', () => {
  const issuer = useIssuer({ config: 'hostile' })

  const request = () => ({
    response_type: 'code',
    client_id: CLIENT,
    redirect_uri: 'http://localhost:9000/cb',
    scope: 'read',
    state: 's',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  })

  it('shows a client_name made of HTML as text', async () => {
    const page = await openLogin(issuer.url, HOST, request())
    const html = page.response.text
    expectOnlyThePagesMarkup(html)
    expect(html).toContain(
      '<strong>&quot;&gt;&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;' +
        '&lt;img src=x onerror=alert(1)&gt; &amp; Co</strong>',
    )
  })

  it('keeps a hostile username in its field as text after a failed attempt', async () => {
    const page = await openLogin(issuer.url, HOST, request())
    const username = `"><script>alert('user')</script>&amp;`
    const res = await submitLogin(
      issuer.url,
      HOST,
      { csrf_token: page.csrfToken, username, password: 'wrong' },
      page.cookie,
    )
    expect(res.status).toBe(400)
    expectOnlyThePagesMarkup(res.text)
    expect(res.text).toContain(
      'value="&quot;&gt;&lt;script&gt;alert(&#39;user&#39;)&lt;/script&gt;&amp;amp;">',
    )
  })

  it('shows the error page for a hostile client_id without echoing it', async () => {
    const res = await send(issuer.url, {
      path: authorizePath({ ...request(), client_id: '<script>alert(1)</script>' }),
      host: HOST,
    })
    expect(res.status).toBe(400)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.text).not.toContain('<script')
  })
})
