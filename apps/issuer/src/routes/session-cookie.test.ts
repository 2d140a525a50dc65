import type { Server } from 'node:http'
import type { GrantDeps } from '@tessera/grants'
import Koa from 'koa'
import { afterEach, describe, expect, it } from 'vitest'
import { writeBrowserCookie } from '../http/cookies.js'
import { setSessionCookie } from './authorize.js'

// The attributes of the session cookie, set by a Koa app over plain http on loopback: under
// `start` it is Secure even so (TLS ends at a proxy the issuer may not be told about).
const now = Date.UTC(2026, 10, 24, 12, 0, 0)
const grants = { clock: () => now } as GrantDeps
let server: Server | undefined

afterEach(() => {
  server?.close()
  server = undefined
})

async function cookieOf(
  secureCookies: boolean,
  clear: boolean,
  cookie: 'tessera_session' | 'tessera_login' = 'tessera_session',
): Promise<string> {
  const app = new Koa()
  app.use((ctx) => {
    if (cookie === 'tessera_login') {
      writeBrowserCookie(ctx, cookie, {
        value: 'b'.repeat(43),
        maxAgeSeconds: 600,
        now,
        secureCookies,
      })
    } else {
      setSessionCookie(
        ctx,
        clear ? undefined : { value: 'v'.repeat(43), expiresAt: now + 8 * 3_600_000 },
        { secureCookies, grants },
      )
    }
    ctx.body = 'ok'
  })
  server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server?.once('listening', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const res = await fetch(`http://127.0.0.1:${address.port}/`)
  return res.headers.get('set-cookie') ?? ''
}

describe('the login-binding cookie', () => {
  it('is Secure under start, even on a plain http request', async () => {
    expect(await cookieOf(true, false, 'tessera_login')).toBe(
      `tessera_login=${'b'.repeat(43)}; Path=/; Max-Age=600; Expires=${new Date(now + 600_000).toUTCString()}; SameSite=Lax; Secure; HttpOnly`,
    )
  })
})

describe('the session cookie', () => {
  it('is Secure under start, even on a plain http request', async () => {
    expect(await cookieOf(true, false)).toBe(
      `tessera_session=${'v'.repeat(43)}; Path=/; Max-Age=28800; Expires=${new Date(now + 28_800_000).toUTCString()}; SameSite=Lax; Secure; HttpOnly`,
    )
  })

  it('is not Secure in dev on plain http', async () => {
    expect(await cookieOf(false, false)).not.toMatch(/Secure/)
  })

  it('is cleared with Max-Age=0 and an expiry in 1970', async () => {
    expect(await cookieOf(true, true)).toBe(
      'tessera_session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Lax; Secure; HttpOnly',
    )
  })
})
