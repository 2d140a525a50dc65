import type { Browser, BrowserContext } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'
import { OIDC_RS, openIdAuthorizeUrl, redeemCode } from '../support/oidc.js'
import type { OidcClient } from '../support/oidc.js'

const T = OIDC_RS

describe('single sign-on in a real browser', () => {
  let browser: Browser
  let port: string

  const issuer = useIssuer({ config: 'oidc' })
  beforeAll(async () => {
    port = new URL(issuer.url).port
    browser = await launchChromium(T.host)
  })
  afterAll(async () => {
    await browser?.close()
  })

  /** The tenant's URL as the browser reaches it: the issuer's port added. */
  function inBrowser(url: URL): string {
    const reached = new URL(url)
    reached.port = port
    return reached.href
  }

  /**
   * Opens /authorize for `app` in a new tab of `context`; when the form shows, signs alice in.
   * Resolves to whether the form was shown, once the browser has gone to the client's
   * redirect_uri with a code. Nothing listens there, so the tab ends on an error page and is
   * closed: the next step starts in a tab of its own.
   */
  async function authorize(context: BrowserContext, app: OidcClient): Promise<{ form: boolean }> {
    const page = await context.newPage()
    const { verifier, challenge } = pkce()
    const url = openIdAuthorizeUrl(T, app, challenge, { nonce: `n-${app.id}`, state: 'sso' })
    const landing = page.waitForRequest((request) => request.url().startsWith(app.redirectUri))
    // Without the form, the navigation itself ends at the redirect_uri, which refuses it.
    const opened = await page.goto(inBrowser(url)).catch(() => null)
    const form = opened?.status() === 200
    if (form) {
      await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true)
      await page.getByLabel('Username').fill('alice')
      await page.getByLabel('Password').fill('alice-password')
      await page.getByRole('button', { name: 'Sign in' }).click()
    }
    const landed = new URL((await landing).url())
    await page.close()
    expect(landed.searchParams.get('state')).toBe('sso')
    const code = landed.searchParams.get('code')
    if (code === null) throw new Error(`no code: ${landed.href}`)
    // The code is good: the client redeems it for an ID token of the same user.
    const tokens = await redeemCode(issuer.url, T, app, code, verifier)
    expect(tokens.id_token).toBeDefined()
    return { form }
  }

  async function sessionCookie(context: BrowserContext) {
    return (await context.cookies()).find((cookie) => cookie.name === 'tessera_session')
  }

  it('signs in once for client A, then client B without the form; after logout A asks again', async () => {
    const context = await browser.newContext()

    await expect(authorize(context, T.a)).resolves.toMatchObject({ form: true })
    const cookie = await sessionCookie(context)
    expect(cookie).toMatchObject({
      domain: T.host,
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      // dev over http.
      secure: false,
    })
    // A persistent cookie, for the session's life (8 hours by default).
    expect(cookie!.expires).toBeGreaterThan(Date.now() / 1000 + 7 * 3600)
    expect(cookie!.expires).toBeLessThanOrEqual(Date.now() / 1000 + 8 * 3600 + 5)

    await expect(authorize(context, T.b)).resolves.toMatchObject({ form: false })

    const page = await context.newPage()
    const signedOut = await page.goto(inBrowser(new URL(`${T.issuer}/logout`)))
    expect(signedOut?.status()).toBe(200)
    await expect(page.getByText('You are signed out').isVisible()).resolves.toBe(true)
    await expect(sessionCookie(context)).resolves.toBeUndefined()

    await expect(authorize(context, T.a)).resolves.toMatchObject({ form: true })
    await context.close()
  })

  it('keeps the session to its browser: another browser context sees the form', async () => {
    const first = await browser.newContext()
    await expect(authorize(first, T.a)).resolves.toMatchObject({ form: true })
    const second = await browser.newContext()
    await expect(authorize(second, T.b)).resolves.toMatchObject({ form: true })
    await first.close()
    await second.close()
  })
})
