import { describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { HS, useIssuer } from '../support/issuer.js'

describe('POST /token (password brute-force protection)', () => {
  const clock = { now: Date.UTC(2026, 10, 22, 12) }

  const issuer = useIssuer({
    clock: () => clock.now,
    vars: {
      PASSWORD_MAX_FAILURES: '3',
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '6',
      PASSWORD_FAILURE_WINDOW_SECONDS: '600',
      TRUST_PROXY: '1',
    },
  })

  function attempt(username: string, password: string, address: string) {
    return postForm(
      issuer.url,
      HS.host,
      {
        grant_type: 'password',
        username,
        password,
        client_id: HS.client,
        client_secret: HS.secret,
      },
      { 'x-forwarded-for': address },
    )
  }

  it('locks one username past the limit with 429 and Retry-After; other users keep working', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await attempt('alice', 'wrong', `10.0.0.${i + 1}`)).status).toBe(400)
    }
    clock.now += 60_000
    const locked = await attempt('alice', 'alice-password', '10.0.0.9')
    expect(locked.status).toBe(429)
    expect(locked.headers['retry-after']).toBe('540')
    expect(locked.json).toMatchObject({ error: 'temporarily_unavailable' })
    expect((await attempt('bob', 'bob-password', '10.0.0.9')).status).toBe(200)

    clock.now += 540_000
    expect((await attempt('alice', 'alice-password', '10.0.0.9')).status).toBe(200)
  })

  it('locks one client address past its limit, whichever usernames it tries', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await attempt(`user${i}`, 'wrong', '10.9.9.9')).status).toBe(400)
    }
    const locked = await attempt('bob', 'bob-password', '10.9.9.9')
    expect(locked.status).toBe(429)
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
    expect((await attempt('bob', 'bob-password', '10.1.1.1')).status).toBe(200)
  })

  it('counts an IPv6 client per /64, and an IPv4-mapped address as its IPv4 address', async () => {
    // Six addresses of one /64: one client rotating through its own prefix.
    for (let i = 0; i < 6; i++) {
      expect((await attempt(`v6user${i}`, 'wrong', `2001:db8:7:8::${i + 1}`)).status).toBe(400)
    }
    const locked = await attempt('bob', 'bob-password', '2001:db8:7:8:ffff::1')
    expect(locked.status).toBe(429)
    expect(locked.json).toMatchObject({
      error_description: 'too many failed sign-in attempts from this address; try again later',
    })
    expect((await attempt('bob', 'bob-password', '2001:db8:7:9::1')).status).toBe(200)

    for (let i = 0; i < 6; i++) {
      expect((await attempt(`v4user${i}`, 'wrong', '::ffff:10.8.8.8')).status).toBe(400)
    }
    expect((await attempt('bob', 'bob-password', '10.8.8.8')).status).toBe(429)
  })
})
