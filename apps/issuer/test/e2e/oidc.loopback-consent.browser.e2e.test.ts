import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { FIXTURES, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { authorizePath, pkce } from '../support/oauth.js'

const HOST = 'native.oidc.test'
const NATIVE = 'dddddddd-3333-4333-8333-333333333333'

// A signed-in browser does not hand a native app's loopback listener a code without
// the user's click. Real Chromium: sign in with the form, then a second request of the app shows
// "Continue as Alice Liddell", and only the click delivers the code to the listener.
describe('"Continue as …" for a loopback redirect URI in Chromium', () => {
  let issuer: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  let browser: Browser
  let callback: Server
  let port = 0
  const received: string[] = []

  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      config: join(FIXTURES, 'oidc-native'),
    })
    callback = createServer((req, res) => {
      // Chromium also asks for /favicon.ico: only the redirects count.
      if (req.url?.startsWith('/callback?') === true) received.push(req.url)
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('signed in; you may close this window')
    })
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve))
    port = (callback.address() as AddressInfo).port
    browser = await launchChromium(HOST)
  })
  afterAll(async () => {
    await browser?.close()
    callback?.closeAllConnections()
    await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()))
    await issuer?.close()
    tmp?.remove()
  })

  function authorizeAt(state: string, challenge: string): string {
    return `http://${HOST}:${new URL(issuer.url).port}${authorizePath({
      response_type: 'code',
      client_id: NATIVE,
      redirect_uri: `http://127.0.0.1:${port}/callback`,
      scope: 'openid profile',
      state,
      nonce: `nonce-${state}`,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })}`
  }

  it('delivers the code to the listener only after "Continue as Alice Liddell" is clicked', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const violations: string[] = []
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text())
    })
    const callbackUrl = `http://127.0.0.1:${port}/callback?`

    // The first sign-in: the password is typed, the code goes to the app.
    await page.goto(authorizeAt('first', pkce().challenge))
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('alice-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((url) => url.href.startsWith(callbackUrl))
    expect(received).toHaveLength(1)

    // The second: the session is live, and the page waits for the click.
    const { verifier, challenge } = pkce()
    await page.goto(authorizeAt('second', challenge))
    await expect(
      page.getByRole('heading', { name: 'Continue as Alice Liddell' }).isVisible(),
    ).resolves.toBe(true)
    await expect(page.textContent('body')).resolves.toContain('Native OIDC App')
    expect(received).toHaveLength(1)

    await page.getByRole('button', { name: 'Continue as Alice Liddell' }).click()
    await page.waitForURL((url) => url.href.startsWith(callbackUrl))
    await expect(page.textContent('body')).resolves.toContain('signed in')
    expect(received).toHaveLength(2)
    expect(violations).toEqual([])

    const landed = new URL(received[1]!, callbackUrl)
    expect(landed.searchParams.get('state')).toBe('second')
    const res = await postForm(issuer.url, HOST, {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      redirect_uri: `http://127.0.0.1:${port}/callback`,
      code_verifier: verifier,
      client_id: NATIVE,
    })
    expect(res.status, res.text).toBe(200)
    await context.close()
  })
})
