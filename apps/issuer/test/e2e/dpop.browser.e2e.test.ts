import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { calculateJwkThumbprint, decodeJwt } from 'jose'
import type { JWK } from 'jose'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.js'
import { FIXTURES, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const HOST = 'dpb.test'
const FIXTURE = join(FIXTURES, 'dpop-browser')

interface TokenCall {
  status: number
  nonce: string | null
  body: Record<string, unknown>
}
type Result =
  | { ok: true; value: { jwk: JWK; first: TokenCall; second: TokenCall } }
  | { ok: false; error: string }

describe('DPoP in Chromium: a browser app on another origin with a WebCrypto key', () => {
  let issuer: InProcessIssuer
  let spa: Server
  let browser: Browser
  let tmp: ReturnType<typeof tempDir>
  let appOrigin: string

  beforeAll(async () => {
    tmp = tempDir()
    const page = readFileSync(join(FIXTURE, 'app.html'), 'utf8')
    spa = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(page)
    })
    await new Promise<void>((resolve) => spa.listen(0, '127.0.0.1', resolve))
    appOrigin = `http://localhost:${(spa.address() as AddressInfo).port}`
    const config = join(tmp.dir, 'tenants.yaml')
    writeFileSync(
      config,
      readFileSync(join(FIXTURE, 'tenants.yaml'), 'utf8')
        .replaceAll('http://spa.test:8081', appOrigin)
        .replaceAll('../basic/providers/', join(FIXTURES, 'basic', 'providers') + '/'),
    )
    issuer = await startIssuer({ databaseUrl: `sqlite:${tmp.dir}/tessera.db`, config })
    browser = await launchChromium(HOST)
  })
  afterAll(async () => {
    await browser?.close()
    await issuer?.close()
    await new Promise((resolve) => spa?.close(resolve))
    tmp?.remove()
  })

  it('sends the DPoP header past the preflight, reads DPoP-Nonce, and gets a bound token', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const issuerBase = `http://${HOST}:${new URL(issuer.url).port}`
    await page.goto(`${appOrigin}/?issuer=${encodeURIComponent(issuerBase)}`)
    const result = await page.evaluate<Result>('window.result')
    if (!result.ok) throw new Error(result.error)
    const { jwk, first, second } = result.value
    // The nonce the issuer asked for was readable: DPoP-Nonce is an exposed header.
    expect(first.status).toBe(400)
    expect(first.body.error).toBe('use_dpop_nonce')
    expect(first.nonce).toMatch(/^[\w-]{43}$/)
    // The proof's htu named the host and port the browser called, not the issuer URL
    // (http://dpb.test): both are accepted.
    expect(second.status).toBe(200)
    expect(second.body.token_type).toBe('DPoP')
    expect(decodeJwt(String(second.body.access_token)).cnf).toEqual({
      jkt: await calculateJwkThumbprint(jwk, 'sha256'),
    })
    expect(second.nonce).toBe(first.nonce)
    // The DPoP header is not CORS-safelisted: the browser asked a preflight, which allowed it.
    const preflights = issuer.logs.filter(
      (line) => line.includes('"msg":"request"') && line.includes('"method":"OPTIONS"'),
    )
    expect(preflights.some((line) => line.includes('"path":"/token"'))).toBe(true)
    await context.close()
  })
})
