/**
 * Only failures count against the password throttle: parallel sign-ins of one user with the
 * right password all succeed, over HTTP and in real Chromium, against a `tessera dev` process
 * on an SQLite file whose provider script takes 50 ms a call. The limit's guarantee under
 * parallel wrong passwords is in throttle.parallel.e2e.test.ts.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../support/chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpResponse } from '../support/http.js'
import { HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { authorizePath, pkce, SPA } from '../support/oauth.js'
import {
  openScriptedLogin,
  passwordGrant,
  postLogin,
  providerCalls,
  SCRIPTED_CONFIG,
} from '../support/scripted.js'

const MAX_FAILURES = 5
const PARALLEL = 20
// Twice the limit: more windows would only slow a 2-core machine down.
const BROWSERS = 2 * MAX_FAILURES

function statuses(responses: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

describe('parallel sign-ins with the right password', { timeout: 120_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  let calls: string
  let issuer: IssuerProcess
  let browser: Browser | undefined

  beforeAll(async () => {
    tmp = tempDir()
    calls = join(tmp.dir, 'calls.log')
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: SCRIPTED_CONFIG,
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PASSWORD_MAX_FAILURES: String(MAX_FAILURES),
        PROVIDER_CALLS_FILE: calls,
      },
    })
  })
  afterAll(async () => {
    await browser?.close()
    await issuer?.close()
    tmp?.remove()
  })

  it(`answers ${PARALLEL} parallel password grants of one user 200, each checked once`, async () => {
    const responses: HttpResponse[] = await Promise.all(
      Array.from({ length: PARALLEL }, () => passwordGrant(issuer.url, 'alice', 'alice-password')),
    )
    expect(statuses(responses)).toEqual({ 200: PARALLEL })
    expect(providerCalls(calls, 'alice')).toHaveLength(PARALLEL)
  })

  it(`signs in ${PARALLEL} parallel login forms of one user`, async () => {
    const pages = await Promise.all(
      Array.from({ length: PARALLEL }, () => openScriptedLogin(issuer.url)),
    )
    const responses = await Promise.all(
      pages.map((page) => postLogin(issuer.url, page, 'dave', 'dave-password')),
    )
    expect(statuses(responses)).toEqual({ 303: PARALLEL })
    for (const res of responses) expect(res.headers.location).toMatch(/[?&]code=/)
  })

  it(`signs in ${BROWSERS} Chromium windows of one user at once`, async () => {
    browser = await launchChromium(HS.host)
    const port = new URL(issuer.url).port
    // One context each: a browser session of its own, with its own binding cookie.
    const pages = await Promise.all(
      Array.from({ length: BROWSERS }, async () => {
        const page = await (await browser!.newContext()).newPage()
        const { challenge } = pkce()
        await page.goto(
          `http://${HS.host}:${port}${authorizePath({
            response_type: 'code',
            client_id: SPA.clientId,
            redirect_uri: SPA.redirectUri,
            state: 'browser-state',
            code_challenge: challenge,
            code_challenge_method: 'S256',
          })}`,
        )
        await page.getByLabel('Username').fill('erin')
        // Right, after 1.5 s: the windows' checks overlap, however the clicks are spread.
        await page.getByLabel('Password').fill('late:erin')
        return page
      }),
    )
    // Nothing listens at the client's redirect_uri; the browser's request to it is the landing.
    const landed = await Promise.all(
      pages.map(async (page) => {
        const [callback] = await Promise.all([
          page.waitForRequest((request) => request.url().startsWith(SPA.redirectUri)),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ])
        return new URL(callback.url())
      }),
    )
    for (const url of landed) {
      expect(url.searchParams.get('code')).toBeTruthy()
      expect(url.searchParams.get('state')).toBe('browser-state')
    }
    expect(providerCalls(calls, 'erin')).toHaveLength(BROWSERS)
  })
})

describe(
  'an attempt that waits PROVIDER_TIMEOUT_MS without a decision',
  { timeout: 60_000 },
  () => {
    let tmp: ReturnType<typeof tempDir>
    let issuer: IssuerProcess
    let file: string

    beforeAll(async () => {
      tmp = tempDir()
      file = join(tmp.dir, 'tessera.db')
      issuer = await startIssuer({
        command: 'dev',
        env: {
          JWT_SECRET,
          TESSERA_CONFIG: SCRIPTED_CONFIG,
          DATABASE_URL: `sqlite:${file}`,
          PASSWORD_MAX_FAILURES: String(MAX_FAILURES),
          PROVIDER_TIMEOUT_MS: '500',
        },
      })
    })
    afterAll(async () => {
      await issuer?.close()
      tmp?.remove()
    })

    it('gets 503 temporarily_unavailable while the holds of a stopped process fill the limit', async () => {
      // What a process that stopped mid-check leaves: holds on bob's counter, their leases live.
      const key = `user:${createHash('sha256').update('hs\nbob').digest('hex')}`
      const db = new Database(file)
      try {
        const add = db.prepare(
          'INSERT INTO throttle_holds (hold, "key", expires_at) VALUES (?, ?, ?)',
        )
        for (let i = 0; i < MAX_FAILURES; i++) add.run(`stopped-${i}`, key, Date.now() + 600_000)
      } finally {
        db.close()
      }
      const res = await passwordGrant(issuer.url, 'bob', 'bob-password')
      expect(res.status).toBe(503)
      expect(res.json).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'sign-in attempts for this user are still being checked; retry later',
      })
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
      const form = await postLogin(issuer.url, await openScriptedLogin(issuer.url), 'bob', 'x')
      expect(form.status).toBe(503)
      expect(form.headers['content-type']).toMatch(/^text\/html/)
      expect(form.text).toContain('Too many sign-ins are being checked at once.')
      expect(Number(form.headers['retry-after'])).toBeGreaterThan(0)
      // Another user is not held up.
      expect((await passwordGrant(issuer.url, 'carol', 'carol-password')).status).toBe(200)
    })
  },
)
