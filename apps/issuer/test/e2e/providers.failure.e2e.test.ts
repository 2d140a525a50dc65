/**
 * Provider scripts that fail: a real `tessera dev` process whose provider
 * hangs, answers late, throws or answers garbage, driven over HTTP through /token and the login
 * form, with the process's own log lines checked.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpResponse } from '../support/http.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  openScriptedLogin,
  passwordGrant,
  postLogin,
  SCRIPTED_CONFIG,
  SCRIPTED_PROVIDER,
} from '../support/scripted.js'

const TIMEOUT_MS = 400
/** Marks every password these tests send, so that the logs can be searched for any of them. */
const SECRET = 'Pw-7c1e9f'

interface LogLine {
  level: number
  msg: string
  provider?: string
  reason?: string
  failure?: string
}

const MALFORMED: [mode: string, reason: string][] = [
  ['no-sub', 'answered a malformed value: sub is not a string'],
  ['number-sub', 'answered a malformed value: sub is not a string'],
  ['empty-sub', 'answered a malformed value: sub is empty'],
  ['array-claims', 'answered a malformed value: claims is not an object of JSON values'],
  [
    'reserved-claims',
    'answered a malformed value: claims would replace reserved claims (iss, scope)',
  ],
  ['function-claim', 'answered a malformed value: claims holds a value that is not JSON'],
  ['cyclic-claims', 'answered a malformed value: claims holds a value that is not JSON'],
  ['string-answer', 'answered a malformed value: the answer is not { sub, claims? } or null'],
]

describe('provider scripts that fail', { timeout: 120_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  let issuer: IssuerProcess

  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: SCRIPTED_CONFIG,
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
        PASSWORD_MAX_FAILURES: '3',
      },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })

  /** The issuer's log lines (stdout and stderr) since `from`, parsed. */
  function logsSince(from: number): LogLine[] {
    return issuer.logs.slice(from).flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine]
      } catch {
        return []
      }
    })
  }

  /**
   * Waits until `count` log lines with `msg` have been written since `from` (the issuer writes
   * its lines at the end of an event-loop turn, so they may follow the response), and returns
   * the first.
   */
  async function logLine(from: number, msg: string, count = 1): Promise<LogLine> {
    for (let i = 0; i < 100; i++) {
      const lines = logsSince(from).filter((entry) => entry.msg === msg)
      if (lines.length >= count) return lines[0]!
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`no ${count} "${msg}" log lines in:\n${issuer.logs.slice(from).join('\n')}`)
  }

  function expectServerError(res: HttpResponse): void {
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ error: 'server_error', error_description: 'internal error' })
    expect(res.text).not.toContain('scripted.mjs')
  }

  describe('POST /token', () => {
    it('answers a provider that hangs with 503 temporarily_unavailable and Retry-After, in time', async () => {
      const from = issuer.logs.length
      const started = Date.now()
      const res = await passwordGrant(issuer.url, 'alice', `hang:${SECRET}`)
      const elapsed = Date.now() - started
      expect(res.status).toBe(503)
      expect(res.json).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'the user directory did not answer in time; retry later',
      })
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS)
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 3000)
      expect(await logLine(from, 'provider timed out')).toMatchObject({
        level: 40,
        failure: 'ERR_PROVIDER_TIMEOUT',
        provider: SCRIPTED_PROVIDER,
        reason: `no answer within ${TIMEOUT_MS} ms`,
      })
    })

    it('ignores an answer that comes after the timeout, and a failure that comes after it', async () => {
      const before = issuer.logs.length
      const late = await passwordGrant(issuer.url, 'alice', `late:${SECRET}`)
      expect(late.status).toBe(503)
      const lateThrow = await passwordGrant(issuer.url, 'alice', `late-throw:${SECRET}`)
      expect(lateThrow.status).toBe(503)
      await logLine(before, 'request', 2)
      const from = issuer.logs.length
      // Both late answers arrive meanwhile; the process neither crashes nor logs them.
      await new Promise((resolve) => setTimeout(resolve, 1800))
      expect(issuer.child.exitCode).toBeNull()
      expect(logsSince(from).filter((line) => line.level >= 40)).toEqual([])
      expect((await passwordGrant(issuer.url, 'bob', 'bob-password')).status).toBe(200)
    })

    it('counts no failure for a provider that timed out: the user is not locked by them', async () => {
      // One after the other: attempts in flight count against the limit until they are settled.
      for (let i = 0; i < 6; i++) {
        expect((await passwordGrant(issuer.url, 'frank', `hang:${SECRET}`)).status).toBe(503)
      }
      expect((await passwordGrant(issuer.url, 'frank', 'frank-password')).status).toBe(200)
    })

    it('answers a provider that throws with 500 server_error and logs the provider and why', async () => {
      const from = issuer.logs.length
      expectServerError(await passwordGrant(issuer.url, 'alice', `throw:${SECRET}`))
      expect(await logLine(from, 'provider failed')).toMatchObject({
        level: 50,
        failure: 'ERR_PROVIDER_FAILED',
        provider: SCRIPTED_PROVIDER,
        reason: 'threw Error: directory refused alice with [password]',
      })
    })

    it.each(MALFORMED)(
      'answers a provider that answers %s with 500 server_error, naming the reason in the log',
      async (mode, reason) => {
        const from = issuer.logs.length
        expectServerError(await passwordGrant(issuer.url, 'alice', `${mode}:${SECRET}`))
        expect(await logLine(from, 'provider failed')).toMatchObject({
          provider: SCRIPTED_PROVIDER,
          reason,
        })
      },
    )

    it('outlives a provider that leaves a promise rejected, logging it without the password', async () => {
      const from = issuer.logs.length
      const res = await passwordGrant(issuer.url, 'dave', `stray-reject:${SECRET}`)
      expect(res.status).toBe(400)
      const line = await logLine(from, 'a promise was rejected and nothing handled it')
      expect(JSON.stringify(line)).not.toContain(SECRET)
      expect(line).toMatchObject({ kind: 'Error' })
      expect((await passwordGrant(issuer.url, 'dave', 'dave-password')).status).toBe(200)
      expect(issuer.child.exitCode).toBeNull()
    })

    it('outlives a provider whose abort listeners throw when its call times out', async () => {
      const from = issuer.logs.length
      const res = await passwordGrant(issuer.url, 'carol', `abort-throw:${SECRET}`)
      expect(res.status).toBe(503)
      // The listeners ran on the abort; what they threw would surface a tick later.
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect((await passwordGrant(issuer.url, 'carol', 'carol-password')).status).toBe(200)
      expect(issuer.child.exitCode).toBeNull()
      // Both requests logged, so that the next test's log window starts after them.
      await logLine(from, 'request', 2)
    })
  })

  describe('the login form', () => {
    it('answers a provider that hangs with a 503 "try again later" page and Retry-After', async () => {
      const page = await openScriptedLogin(issuer.url)
      const from = issuer.logs.length
      const started = Date.now()
      const res = await postLogin(issuer.url, page, 'alice', `hang:${SECRET}`)
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000)
      expect(res.status).toBe(503)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
      expect(res.headers['content-security-policy']).toContain("default-src 'none'")
      expect(res.text).toContain('Try again later')
      expect(res.text).not.toContain(SECRET)
      expect(await logLine(from, 'provider timed out')).toMatchObject({
        provider: SCRIPTED_PROVIDER,
      })
    })

    it('answers a provider that throws with an HTML error page (500)', async () => {
      const page = await openScriptedLogin(issuer.url)
      const from = issuer.logs.length
      const res = await postLogin(issuer.url, page, 'alice', `throw:${SECRET}`)
      expect(res.status).toBe(500)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.text).toContain('Cannot sign in')
      expect(res.text).not.toContain('scripted.mjs')
      expect(res.text).not.toContain(SECRET)
      expect(await logLine(from, 'provider failed')).toMatchObject({
        provider: SCRIPTED_PROVIDER,
        reason: 'threw Error: directory refused alice with [password]',
      })
    })

    it.each(MALFORMED)(
      'answers a provider that answers %s with an HTML error page (500)',
      async (mode, reason) => {
        const page = await openScriptedLogin(issuer.url)
        const from = issuer.logs.length
        const res = await postLogin(issuer.url, page, 'alice', `${mode}:${SECRET}`)
        expect(res.status).toBe(500)
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
        expect(res.text).toContain('Cannot sign in')
        expect(await logLine(from, 'provider failed')).toMatchObject({ reason })
      },
    )

    it('still signs a user in after all that', async () => {
      const page = await openScriptedLogin(issuer.url)
      const res = await postLogin(issuer.url, page, 'alice', 'alice-password')
      expect(res.status).toBe(303)
    })
  })

  it('never writes a password to the log', () => {
    expect(issuer.logs.join('\n')).not.toContain(SECRET)
  })
})
