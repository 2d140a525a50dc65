import { describe, expect, it } from 'vitest'
import type { HttpResponse } from '../support/http.js'
import { useIssuer } from '../support/issuer.js'
import {
  freshAddress,
  GATED,
  manage,
  REG,
  register,
  REGISTRATION_VARS,
} from '../support/registration.js'
import type { Registered } from '../support/registration.js'

// The limits of dynamic client registration: the initial access token, max_registrations under
// concurrency, and the throttle per address.
const CB = 'https://app.example.com/callback'

function statuses(answers: HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

describe('registration behind an initial access token, for at most five clients', () => {
  const issuer = useIssuer({ config: 'registration', vars: REGISTRATION_VARS })

  it('refuses a registration without the initial access token, or with a wrong one', async () => {
    const answers = await Promise.all([
      register(issuer.url, GATED.host, { redirect_uris: [CB] }),
      register(issuer.url, GATED.host, { redirect_uris: [CB] }, { token: `${GATED.token}x` }),
      register(issuer.url, GATED.host, { redirect_uris: [CB] }, { token: GATED.token.slice(1) }),
    ])
    for (const res of answers) {
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/)
      expect(res.headers['cache-control']).toBe('no-store')
      expect((res.json as { error: string }).error).toBe('invalid_token')
    }
  })

  it('registers exactly max_registrations of 30 parallel requests, then one more after a delete', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        register(
          issuer.url,
          GATED.host,
          { redirect_uris: [CB], client_name: `client ${n}` },
          { token: GATED.token },
        ),
      ),
    )
    expect(statuses(answers)).toEqual({ 201: 5, 400: 25 })
    const refused = answers.find((res) => res.status === 400)
    expect(refused?.json).toEqual({
      error: 'invalid_client_metadata',
      error_description:
        'this server holds its limit of 5 registered clients; no more can be registered',
    })
    const first = answers.find((res) => res.status === 201)?.json as Registered
    expect(first.scope).toBe('files:read')
    const again = await register(
      issuer.url,
      GATED.host,
      { redirect_uris: [CB] },
      { token: GATED.token },
    )
    expect(again.status).toBe(400)

    const deleted = await manage(
      issuer.url,
      GATED.host,
      'DELETE',
      first.client_id,
      first.registration_access_token,
    )
    expect(deleted.status).toBe(204)
    const after = await register(
      issuer.url,
      GATED.host,
      { redirect_uris: [CB] },
      { token: GATED.token },
    )
    expect(after.status).toBe(201)
  })
})

describe('the registration throttle', () => {
  const issuer = useIssuer({ config: 'registration', vars: REGISTRATION_VARS })

  it('answers 429 with Retry-After past 20 requests a minute from one address, bad ones included', async () => {
    const address = freshAddress()
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        register(
          issuer.url,
          REG.host,
          n % 4 === 0
            ? { redirect_uris: ['http://not-loopback.example/cb'] }
            : { redirect_uris: [CB] },
          { address },
        ),
      ),
    )
    expect(statuses(sent)).toEqual({ 201: 15, 400: 5 })
    const refused = await register(issuer.url, REG.host, { redirect_uris: [CB] }, { address })
    expect(refused.status).toBe(429)
    expect(refused.headers['cache-control']).toBe('no-store')
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.json).toEqual({
      error: 'temporarily_unavailable',
      error_description:
        'too many registrations from this address (at most 20 a minute); try again later',
    })
    // Counted per address, across tenants: another address goes on, this one is refused anywhere.
    expect((await register(issuer.url, REG.host, { redirect_uris: [CB] })).status).toBe(201)
    const elsewhere = await register(
      issuer.url,
      GATED.host,
      { redirect_uris: [CB] },
      {
        address,
        token: GATED.token,
      },
    )
    expect(elsewhere.status).toBe(429)
  })

  it('lets exactly 20 of 40 parallel requests from one address through', async () => {
    const address = freshAddress()
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        register(issuer.url, REG.host, { redirect_uris: [CB] }, { address }),
      ),
    )
    expect(statuses(answers)).toEqual({ 201: 20, 429: 20 })
  })
})
