import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { HS, useIssuer } from '../support/issuer.js'
import { authorizePath, pkce, SPA } from '../support/oauth.js'

const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url))

describe('the login page in a real browser', () => {
  let browser: Browser

  const issuer = useIssuer()
  beforeAll(async () => {
    browser = await launchChromium('hs.test')
  })
  afterAll(async () => {
    await browser?.close()
  })

  it('signs in by typing the credentials and lands on the redirect with a code', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const { verifier, challenge } = pkce()
    const port = new URL(issuer.url).port
    const state = 'browser-state'
    await page.goto(
      `http://hs.test:${port}${authorizePath({
        response_type: 'code',
        client_id: SPA.clientId,
        redirect_uri: SPA.redirectUri,
        scope: 'read',
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`,
    )
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true)
    await expect(page.getByText('Test SPA').isVisible()).resolves.toBe(true)

    // A wrong password first: the message, and the form again.
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('not-her-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Invalid username or password.',
    )

    await page.getByLabel('Password').fill('alice-password')
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: `${ARTIFACTS}login-page.png`, fullPage: true })
    // Nothing listens at the client's redirect_uri; the browser's request to it is the landing.
    const [callback] = await Promise.all([
      page.waitForRequest((request) => request.url().startsWith(SPA.redirectUri)),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ])
    expect(callback.isNavigationRequest()).toBe(true)

    const landed = new URL(callback.url())
    expect(landed.searchParams.get('state')).toBe(state)
    expect(landed.searchParams.get('iss')).toBe(HS.issuer)
    const code = landed.searchParams.get('code')!
    const res = await postForm(issuer.url, HS.host, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    })
    expect(res.status).toBe(200)
    await context.close()
  })

  it('cannot be framed by another site', async () => {
    const page = await browser.newPage()
    const port = new URL(issuer.url).port
    const loginUrl = `http://hs.test:${port}${authorizePath({
      response_type: 'code',
      client_id: SPA.clientId,
      redirect_uri: SPA.redirectUri,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    })}`
    await page.route('http://evil.test/**', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: `<iframe id="f" src="${loginUrl.replace(/&/g, '&amp;')}"></iframe>`,
      }),
    )
    // 'load' waits for the iframe too, whether it loaded or was blocked.
    await page.goto('http://evil.test/', { waitUntil: 'load' })
    const frame = page.frames().find((f) => f !== page.mainFrame())
    // Chromium blocks the frame: it never gets the login form.
    const hasForm = frame
      ? await frame
          .locator('form')
          .count()
          .catch(() => 0)
      : 0
    expect(hasForm).toBe(0)
    await page.close()
  })
})
