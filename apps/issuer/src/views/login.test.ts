import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { STYLE_HASH } from './html.js'
import { renderErrorPage, renderLoginPage, renderUnavailablePage } from './login.js'

// Every character that means something in HTML content or in a quoted attribute value.
const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;`
const ESCAPED =
  '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;'

/** What a page would look like if any value reached it unescaped. */
function expectNoMarkupFrom(page: string): void {
  expect(page).not.toContain('<script')
  expect(page).not.toContain('<img')
  expect(page).not.toContain(`'x'`)
  expect(page).not.toContain(HOSTILE)
  // The page's own markup is all there is: one of each element the layout has.
  expect(page.match(/<main>/g)).toHaveLength(1)
  expect(page.match(/<title>/g)).toHaveLength(1)
}

describe('the sign-in pages', () => {
  // Recorded from the pages as they were before the html tag; they must not change by a byte.
  it('render the same markup as before for ordinary values', () => {
    expect(
      renderLoginPage({
        tenantName: 'acme',
        clientName: 'Acme Web',
        csrfToken: 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..abc.def.ghi',
      }),
    ).toMatchSnapshot('login')
    expect(
      renderLoginPage({
        tenantName: 'acme',
        clientName: 'Acme Web',
        csrfToken: 'token-value',
        message: 'Invalid username or password.',
        username: 'alice',
      }),
    ).toMatchSnapshot('login after a failed attempt')
    expect(renderErrorPage('The client is not known to this server.')).toMatchSnapshot('error')
    expect(renderUnavailablePage()).toMatchSnapshot('unavailable')
  })

  it('carry the one stylesheet whose hash the Content-Security-Policy allows', () => {
    for (const page of [
      renderLoginPage({ tenantName: 'acme', clientName: 'Acme Web', csrfToken: 't' }),
      renderErrorPage('no'),
      renderUnavailablePage(),
    ]) {
      const styles = [...page.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1] ?? '')
      expect(styles).toHaveLength(1)
      const hash = createHash('sha256')
        .update(styles[0] ?? '')
        .digest('base64')
      expect(STYLE_HASH).toBe(`'sha256-${hash}'`)
    }
  })

  it('escape hostile values in every field of the login page', () => {
    const page = renderLoginPage({
      tenantName: HOSTILE,
      clientName: HOSTILE,
      csrfToken: HOSTILE,
      message: HOSTILE,
      username: HOSTILE,
    })
    expectNoMarkupFrom(page)
    // Title, client, tenant, alert, the hidden token and the username field.
    expect(page.split(ESCAPED)).toHaveLength(7)
    expect(page).toContain(`<title>Sign in · ${ESCAPED}</title>`)
    expect(page).toContain(`<strong>${ESCAPED}</strong> at <strong>${ESCAPED}</strong>`)
    expect(page).toContain(`<p class="alert" role="alert">${ESCAPED}</p>`)
    expect(page).toContain(`name="csrf_token" value="${ESCAPED}"`)
    expect(page).toContain(`autofocus value="${ESCAPED}"`)
  })

  it('escape hostile text on the error page', () => {
    const page = renderErrorPage(HOSTILE)
    expectNoMarkupFrom(page)
    expect(page).toContain(`<p class="alert" role="alert">${ESCAPED}</p>`)
  })
})
