import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import { authorizePath, pkce } from '../support/oauth.js'

const HOST = 'native.test'
const APP = '66666666-6666-4666-8666-666666666666'

/** A native app's loopback listener: records the callback it receives and says so. */
async function startCallbackServer(host: '127.0.0.1' | '::1'): Promise<{
  server: Server
  port: number
  received: Promise<string>
}> {
  let receive: (url: string) => void = () => undefined
  const received = new Promise<string>((resolve) => (receive = resolve))
  const server = createServer((req, res) => {
    receive(req.url ?? '')
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end('signed in; you may close this window')
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { server, port: (server.address() as AddressInfo).port, received }
}

// Chromium applies the login page's CSP form-action to the redirect that follows sign-in, so a
// form-action that misses the private-use or loopback redirect leaves the code issued and never
// delivered.
describe('native apps signing in through Chromium (RFC 8252)', () => {
  let browser: Browser

  const issuer = useIssuer({ config: 'native' })
  beforeAll(async () => {
    browser = await launchChromium('native.test')
  })
  afterAll(async () => {
    await browser?.close()
  })

  /** Opens the login page for `redirectUri` and types alice's credentials, without submitting. */
  async function fillLogin(
    redirectUri: string,
  ): Promise<{ page: Page; verifier: string; violations: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext()
    const page = await context.newPage()
    const violations: string[] = []
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text())
    })
    const { verifier, challenge } = pkce()
    const port = new URL(issuer.url).port
    await page.goto(
      `http://${HOST}:${port}${authorizePath({
        response_type: 'code',
        client_id: APP,
        redirect_uri: redirectUri,
        scope: 'read',
        state: 'native',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`,
    )
    await expect(page.getByText('Native App').isVisible()).resolves.toBe(true)
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('alice-password')
    return { page, verifier, violations, close: () => context.close() }
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

  it('hands the code to a private-use scheme (com.example.app:) without a CSP violation', async () => {
    const redirectUri = 'com.example.app:/oauth2redirect'
    const { page, verifier, violations, close } = await fillLogin(redirectUri)
    const handedOver: string[] = []
    page.on('request', (request) => {
      if (request.url().startsWith('com.example.app:')) handedOver.push(request.url())
    })
    // The browser navigates to the app's URI; with no app installed to take it the navigation
    // then ends, which is as far as a browser can go.
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${redirectUri}?`), { timeout: 10_000 }),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ])
    expect(request.isNavigationRequest()).toBe(true)
    expect(handedOver).toHaveLength(1)
    expect(violations).toEqual([])

    const landed = new URL(request.url())
    expect(landed.searchParams.get('state')).toBe('native')
    const res = await redeem(landed.searchParams.get('code')!, redirectUri, verifier)
    expect(res.status, res.text).toBe(200)
    await close()
  })

  it.each([
    ['127.0.0.1', '127.0.0.1', (port: number) => `http://127.0.0.1:${port}/callback`],
    ['[::1]', '::1', (port: number) => `http://[::1]:${port}/callback`],
  ] as const)(
    'delivers the code to a loopback listener on %s at a random port',
    async (_name, address, uri) => {
      const callback = await startCallbackServer(address)
      try {
        const redirectUri = uri(callback.port)
        const { page, verifier, violations, close } = await fillLogin(redirectUri)
        await page.getByRole('button', { name: 'Sign in' }).click()
        const path = await Promise.race([
          callback.received,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('no callback within 10 s')), 10_000).unref(),
          ),
        ])
        await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`))
        await expect(page.textContent('body')).resolves.toContain('signed in')
        expect(violations).toEqual([])

        const landed = new URL(path, redirectUri)
        expect(landed.pathname).toBe('/callback')
        expect(landed.searchParams.get('state')).toBe('native')
        const res = await redeem(landed.searchParams.get('code')!, redirectUri, verifier)
        expect(res.status, res.text).toBe(200)
        await close()
      } finally {
        callback.server.closeAllConnections()
        await new Promise<void>((resolve) => callback.server.close(() => resolve()))
      }
    },
  )
})
