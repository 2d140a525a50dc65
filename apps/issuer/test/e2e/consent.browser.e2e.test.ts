import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt } from 'jose'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.js'
import { startDocumentServer } from '../support/client-documents.js'
import type { DocumentServer } from '../support/client-documents.js'
import { CONSENT, consentTenant } from '../support/consent.js'
import type { ConsentTenant } from '../support/consent.js'
import { postForm, send } from '../support/http.js'
import { startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { pkce } from '../support/oauth.js'

// A client the tenant does not list (here: named by its metadata document URL) gets no code
// before the user allows it on the consent page. Real Chromium, a real issuer on loopback, the
// document served over http on loopback (FETCH_ALLOW_PRIVATE_ADDRESSES), the client's redirect URI
// a listener of the test at the tenant's host name (so it is no loopback redirect URI).
describe('the consent page in Chromium', () => {
  let issuer: InProcessIssuer
  let tmp: ReturnType<typeof tempDir>
  let docs: DocumentServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let agent: string
  let tenant: ConsentTenant
  let app: Server
  const landed: URL[] = []
  const violations: string[] = []
  const dialogs: string[] = []

  beforeAll(async () => {
    tmp = tempDir()
    app = createServer((req, res) => {
      // Chromium also asks for /favicon.ico: only the redirects count.
      if (req.url?.startsWith('/callback?') === true) {
        landed.push(new URL(req.url, tenant.redirectUri))
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the app')
    })
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
    tenant = consentTenant(`http://${CONSENT.host}:${(app.address() as AddressInfo).port}/callback`)
    docs = await startDocumentServer()
    agent = tenant.serveClient(docs, '/agent.json', 'Acme Agent')
    issuer = await startIssuer({
      config: tenant.writeConfig(tmp.dir),
      databaseUrl: `sqlite:${tmp.dir}/tessera.db`,
      vars: { FETCH_ALLOW_PRIVATE_ADDRESSES: 'true' },
    })
    browser = await launchChromium(CONSENT.host)
    context = await browser.newContext()
    page = await context.newPage()
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text())
    })
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
  })
  afterAll(async () => {
    await context?.close()
    await browser?.close()
    await issuer?.close()
    await docs?.close()
    app?.closeAllConnections()
    await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()))
    tmp?.remove()
  })

  function at(url: URL): string {
    url.port = new URL(issuer.url).port
    return url.href
  }

  async function landing(count: number, redirectUri = tenant.redirectUri): Promise<URL> {
    await page.waitForURL((url) => url.href.startsWith(redirectUri))
    expect(landed).toHaveLength(count)
    return landed[count - 1]!
  }

  async function redeem(
    clientId: string,
    code: string,
    verifier: string,
    redirectUri = tenant.redirectUri,
  ) {
    const res = await postForm(issuer.url, CONSENT.host, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    })
    expect(res.status, res.text).toBe(200)
    return res.json as { access_token: string; scope: string }
  }

  it('asks after the sign-in: the name, its host, each scope and the resource', async () => {
    const { verifier, challenge } = pkce()
    await page.goto(at(tenant.authorizeUrl(agent, challenge)))
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('alice-password')
    await page.getByRole('button', { name: 'Sign in' }).click()

    await expect(
      page.getByRole('heading', { name: 'Allow Acme Agent?' }).isVisible(),
    ).resolves.toBe(true)
    const docsHost = new URL(docs.http).host
    await expect(page.locator('.client-host').textContent()).resolves.toBe(docsHost)
    await expect(page.locator('ul.scopes li').allTextContents()).resolves.toEqual([
      'openid',
      'tools:read',
    ])
    await expect(page.locator('ul.resources li').allTextContents()).resolves.toEqual([
      CONSENT.resource,
    ])
    await expect(page.getByRole('button').allTextContents()).resolves.toEqual(['Allow', 'Deny'])
    expect(landed).toHaveLength(0)

    await page.getByRole('button', { name: 'Allow' }).click()
    const back = await landing(1)
    expect(back.searchParams.get('state')).toBe('consent-state')
    expect(back.searchParams.get('iss')).toBe(CONSENT.issuer)
    const tokens = await redeem(agent, back.searchParams.get('code')!, verifier)
    expect(tokens.scope).toBe('openid tools:read')
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      aud: CONSENT.resource,
      sub: 'user-alice',
    })
    expect(violations).toEqual([])
  })

  it('skips the page on the next sign-in from the session, for the same or fewer scopes', async () => {
    const { verifier, challenge } = pkce()
    await page.goto(at(tenant.authorizeUrl(agent, challenge, { state: 'again' })))
    const back = await landing(2)
    expect(back.searchParams.get('state')).toBe('again')
    await redeem(agent, back.searchParams.get('code')!, verifier)
    await page.goto(at(tenant.authorizeUrl(agent, pkce().challenge, { scope: 'openid' })))
    expect((await landing(3)).searchParams.get('code')).not.toBeNull()
  })

  it('asks again for prompt=consent and for a scope beyond the consent', async () => {
    const asks: Record<string, string>[] = [
      { prompt: 'consent' },
      { scope: 'openid tools:read tools:call' },
    ]
    for (const params of asks) {
      await page.goto(at(tenant.authorizeUrl(agent, pkce().challenge, params)))
      await expect(
        page.getByRole('heading', { name: 'Allow Acme Agent?' }).isVisible(),
      ).resolves.toBe(true)
      expect(landed).toHaveLength(3)
    }
  })

  it('answers Deny with access_denied at the redirect URI, and asks again next time', async () => {
    const wider = { scope: 'openid tools:read tools:call', state: 'denied' }
    await page.goto(at(tenant.authorizeUrl(agent, pkce().challenge, wider)))
    await page.getByRole('button', { name: 'Deny' }).click()
    const back = await landing(4)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('denied')
    expect(back.searchParams.get('iss')).toBe(CONSENT.issuer)
    expect(back.searchParams.has('code')).toBe(false)

    await page.goto(at(tenant.authorizeUrl(agent, pkce().challenge, wider)))
    await expect(page.getByRole('button', { name: 'Deny' }).isVisible()).resolves.toBe(true)
    expect(landed).toHaveLength(4)
  })

  it('never asks about a client the tenant file lists', async () => {
    await page.goto(at(tenant.authorizeUrl(CONSENT.listed, pkce().challenge)))
    expect((await landing(5)).searchParams.get('code')).not.toBeNull()
  })

  it('asks about a registered client at a loopback redirect URI once, its long name cut', async () => {
    const loopback = tenant.redirectUri.replace(CONSENT.host, '127.0.0.1')
    // 100 characters, the most a registration takes: markup, a right-to-left override, 80 Ws.
    const name = `<b>Evil</b> \u202Eelgoog ${'W'.repeat(80)}`
    const registered = await send(issuer.url, {
      method: 'POST',
      path: '/register',
      host: CONSENT.host,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: name,
        redirect_uris: [loopback],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
      }),
    })
    expect(registered.status, registered.text).toBe(201)
    const clientId = (registered.json as { client_id: string }).client_id
    const { verifier, challenge } = pkce()
    const url = tenant.authorizeUrl(clientId, challenge, { redirect_uri: loopback })
    // The session is live: the consent page stands for "Continue as" as well.
    await page.goto(at(url))
    const shown = `<b>Evil</b> elgoog ${'W'.repeat(80)}`.slice(0, 79)
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Allow ${shown}…?`,
    )
    await expect(page.locator('.client-host').count()).resolves.toBe(0)
    await expect(page.locator('main b').count()).resolves.toBe(0)
    expect(landed).toHaveLength(5)
    await page.getByRole('button', { name: 'Allow' }).click()
    const back = await landing(6, loopback)
    expect(back.searchParams.get('state')).toBe('consent-state')
    await redeem(clientId, back.searchParams.get('code')!, verifier, loopback)
  })

  it('shows a hostile client_name as text, without bidirectional overrides', async () => {
    const name = `<img src=x onerror=alert(1)><script>alert(2)</script>\u202Egnp.exe`
    const hostile = tenant.serveClient(docs, '/hostile.json', name)
    await page.goto(at(tenant.authorizeUrl(hostile, pkce().challenge)))
    const heading = page.getByRole('heading', { level: 1 })
    await expect(heading.textContent()).resolves.toBe(
      'Allow <img src=x onerror=alert(1)><script>alert(2)</script>gnp.exe?',
    )
    await expect(page.locator('main img, main script').count()).resolves.toBe(0)
    expect(dialogs).toEqual([])
    expect(violations).toEqual([])
  })
})
