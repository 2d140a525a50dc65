import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basicAuth, send } from '../support/http.js'
import { FIXTURES, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const HOST = 'cors.test'
const SPA_DIR = join(FIXTURES, 'cors', 'spa')
const API = { id: '99999999-9999-4999-8999-999999999999', secret: 'cors-api-secret-0' }

interface Call {
  status: number
  body: Record<string, unknown> | null
}
type FlowResult =
  | {
      ok: true
      value: Record<'metadata' | 'token' | 'refresh' | 'revoke' | 'reuse' | 'jwks', Call>
    }
  | { ok: false; error: string }
interface Attempt {
  read: boolean
  error?: string
  status?: number
}

/** Serves the SPA's static pages: `/` and `/callback` the app, `/unlisted` the other page. */
function serveSpa(): Promise<Server> {
  const pages: Record<string, string> = {
    '/': readFileSync(join(SPA_DIR, 'app.html'), 'utf8'),
    '/callback': readFileSync(join(SPA_DIR, 'app.html'), 'utf8'),
    '/unlisted': readFileSync(join(SPA_DIR, 'unlisted.html'), 'utf8'),
  }
  const server = createServer((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://spa').pathname]
    res.writeHead(page === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(page ?? 'not found')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/** The request log lines the issuer wrote, as method + path. */
function requests(issuer: InProcessIssuer): string[] {
  return issuer.logs
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => {
      const { method, path } = JSON.parse(line) as { method: string; path: string }
      return `${method} ${path}`
    })
}

describe('CORS in Chromium: a browser app on another origin', () => {
  let issuer: InProcessIssuer
  let spa: Server
  let browser: Browser
  let tmp: ReturnType<typeof tempDir>
  // The app's origin, listed through its redirect URI; the same server under another name is
  // another origin, listed nowhere.
  let appOrigin: string
  let unlistedOrigin: string
  let issuerBase: string

  beforeAll(async () => {
    tmp = tempDir()
    spa = await serveSpa()
    const { port } = spa.address() as AddressInfo
    appOrigin = `http://localhost:${port}`
    unlistedOrigin = `http://127.0.0.1:${port}`
    // The fixture tenant, with the SPA's redirect URI on the port its page server got.
    const config = join(tmp.dir, 'tenants.yaml')
    const fixture = readFileSync(join(FIXTURES, 'cors', 'tenants.yaml'), 'utf8')
    writeFileSync(
      config,
      fixture
        .replaceAll('http://spa.test:8081/callback', `${appOrigin}/callback`)
        .replaceAll('../basic/providers/', join(FIXTURES, 'basic', 'providers') + '/'),
    )
    issuer = await startIssuer({ databaseUrl: `sqlite:${tmp.dir}/tessera.db`, config })
    issuerBase = `http://${HOST}:${new URL(issuer.url).port}`
    browser = await launchChromium(HOST)
  })
  afterAll(async () => {
    await browser?.close()
    await issuer?.close()
    await new Promise((resolve) => spa?.close(resolve))
    tmp?.remove()
  })

  async function signIn(page: Page): Promise<void> {
    await page.getByLabel('Username').fill('alice')
    await page.getByLabel('Password').fill('alice-password')
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${appOrigin}/callback?`)),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ])
  }

  it('runs code + PKCE, refresh and revocation with fetch, every answer readable', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const before = requests(issuer).length
    await page.goto(`${appOrigin}/?issuer=${encodeURIComponent(issuerBase)}`)
    // The app navigates to the issuer's login page.
    await page.waitForURL((url) => url.host === new URL(issuerBase).host)
    await expect(page.getByText('CORS SPA').isVisible()).resolves.toBe(true)
    await signIn(page)

    const result = await page.evaluate<FlowResult>('window.result')
    if (!result.ok) throw new Error(result.error)
    const { metadata, token, refresh, revoke, reuse, jwks } = result.value
    expect(metadata.status).toBe(200)
    expect(metadata.body?.issuer).toBe(`http://${HOST}`)
    expect(token.status).toBe(200)
    expect(token.body).toMatchObject({ token_type: 'bearer', scope: 'read' })
    expect(refresh.status).toBe(200)
    expect(refresh.body?.refresh_token).not.toBe(token.body?.refresh_token)
    expect(revoke).toEqual({ status: 200, body: null })
    // The revoked family's refresh token is refused, and the app can read why.
    expect(reuse.status).toBe(400)
    expect(reuse.body?.error).toBe('invalid_grant')
    expect(jwks.status).toBe(200)
    // The JSON bodies were preflighted, the form body and the GETs were not; the second JSON
    // call to /token reused the first preflight's answer (Access-Control-Max-Age).
    const preflights = requests(issuer)
      .slice(before)
      .filter((line) => line.startsWith('OPTIONS '))
    expect(preflights.sort()).toEqual(['OPTIONS /revoke', 'OPTIONS /token'])

    // What the browser did, seen from the server: the access token died with its family.
    const introspection = await send(issuer.url, {
      method: 'POST',
      path: '/introspect',
      host: HOST,
      headers: {
        authorization: basicAuth(API.id, API.secret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: String(refresh.body?.access_token) }).toString(),
    })
    expect(introspection.json).toEqual({ active: false })
    await context.close()
  })

  it('refuses a page on an unlisted origin before it reads anything', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const before = requests(issuer)
    await page.goto(`${unlistedOrigin}/unlisted?issuer=${encodeURIComponent(issuerBase)}`)
    const result = await page.evaluate<Record<string, Attempt>>('window.result')
    expect(result).toEqual({
      metadata: { read: false, error: 'TypeError' },
      token: { read: false, error: 'TypeError' },
      revoke: { read: false, error: 'TypeError' },
    })
    // The simple requests were sent (CORS guards reading, not sending); the JSON one never got
    // past its preflight.
    const seen = requests(issuer).slice(before.length)
    expect(seen).toContain('GET /.well-known/oauth-authorization-server')
    expect(seen).toContain('POST /token')
    expect(seen).toContain('OPTIONS /revoke')
    expect(seen).not.toContain('POST /revoke')
    await context.close()
  })
})
