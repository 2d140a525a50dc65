import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import { HS, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'
import { authorizePath, pkce, SPA } from '../support/oauth.js'

// Behind TRUST_PROXY=n proxies, the client address is the n-th X-Forwarded-For entry
// from the right, and host and protocol are the nearest proxy's; what the client itself wrote
// further left changes nothing.
describe('TRUST_PROXY', () => {
  const tmp = tempDir()
  const issuers: Record<string, InProcessIssuer> = {}

  beforeAll(async () => {
    const vars = { PASSWORD_MAX_FAILURES: '100', PASSWORD_MAX_FAILURES_PER_ADDRESS: '3' }
    for (const trustProxy of ['1', '2', 'false']) {
      issuers[trustProxy] = await startIssuer({
        databaseUrl: `sqlite:${tmp.dir}/proxy-${trustProxy}.db`,
        vars: { ...vars, TRUST_PROXY: trustProxy },
      })
    }
  })
  afterAll(async () => {
    for (const issuer of Object.values(issuers)) await issuer.close()
    tmp.remove()
  })

  const forged = (): string => `10.${randomBytes(3).join('.')}`

  function guess(issuer: InProcessIssuer, username: string, forwardedFor: string) {
    return postForm(
      issuer.url,
      HS.host,
      {
        grant_type: 'password',
        username,
        password: 'wrong',
        client_id: HS.client,
        client_secret: HS.secret,
      },
      { 'x-forwarded-for': forwardedFor },
    )
  }

  it('counts failures for the address the proxy appended, whatever the client put before it', async () => {
    const issuer = issuers['1']!
    for (let i = 0; i < 3; i++) {
      const res = await guess(issuer, `user${i}`, `${forged()}, ${forged()}, 10.0.0.7`)
      expect(res.status).toBe(400)
    }
    // A fresh forged prefix and a fresh username: still 10.0.0.7, past its limit.
    for (let i = 0; i < 3; i++) {
      const res = await guess(issuer, `other${i}`, `${forged()}, 10.0.0.7`)
      expect(res.status).toBe(429)
      expect(res.json).toMatchObject({ error: 'temporarily_unavailable' })
    }
    // Another client behind the same proxy is not affected.
    expect((await guess(issuer, 'user0', `10.0.0.7, 10.0.0.8`)).status).toBe(400)
  })

  it('parallel requests with random prefixes all count for the one address', async () => {
    const issuer = issuers['1']!
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => guess(issuer, `p${i}`, `${forged()}, 10.0.1.1`)),
    )
    expect(answers.every((res) => res.status === 400 || res.status === 429)).toBe(true)
    expect((await guess(issuer, 'late', `${forged()}, 10.0.1.1`)).status).toBe(429)
    expect((await guess(issuer, 'late', `${forged()}, 10.0.1.2`)).status).toBe(400)
  })

  it('with two proxies, takes the second entry from the right', async () => {
    const issuer = issuers['2']!
    for (let i = 0; i < 3; i++) {
      // Each request came through a different outer-proxy address, for the same client.
      const res = await guess(issuer, `user${i}`, `${forged()}, 10.0.0.9, 10.2.0.${i}`)
      expect(res.status).toBe(400)
    }
    expect((await guess(issuer, 'userX', `${forged()}, 10.0.0.9, 10.2.0.9`)).status).toBe(429)
  })

  it('without TRUST_PROXY, ignores X-Forwarded-For: the socket address counts', async () => {
    const issuer = issuers['false']!
    for (let i = 0; i < 3; i++) {
      expect((await guess(issuer, `user${i}`, forged())).status).toBe(400)
    }
    expect((await guess(issuer, 'userX', forged())).status).toBe(429)
  })

  const metadataIssuer = async (issuer: InProcessIssuer, host: string, forwarded?: string) => {
    const res = await send(issuer.url, {
      path: '/.well-known/oauth-authorization-server',
      host,
      headers: forwarded === undefined ? {} : { 'x-forwarded-host': forwarded },
    })
    return res.status === 200 ? (res.json as { issuer: string }).issuer : res.status
  }

  it('serves the tenant of the nearest proxy’s X-Forwarded-Host', async () => {
    for (const trustProxy of ['1', '2']) {
      const issuer = issuers[trustProxy]!
      expect(await metadataIssuer(issuer, 'internal.svc', `${RS.host}, ${HS.host}`)).toBe(HS.issuer)
      expect(await metadataIssuer(issuer, 'internal.svc', `evil.test,${RS.host}`)).toBe(RS.issuer)
      expect(await metadataIssuer(issuer, 'internal.svc', `${HS.host}, evil.test`)).toBe(404)
      expect(await metadataIssuer(issuer, 'internal.svc', HS.host)).toBe(HS.issuer)
      // No forwarded host: the Host header; an empty nearest value is no value, not the
      // client's left-most one.
      expect(await metadataIssuer(issuer, RS.host)).toBe(RS.issuer)
      expect(await metadataIssuer(issuer, RS.host, `${HS.host}, `)).toBe(RS.issuer)
      expect(await metadataIssuer(issuer, RS.host, `${HS.host},`)).toBe(RS.issuer)
    }
    // Not trusted: the header is ignored.
    expect(await metadataIssuer(issuers.false!, RS.host, HS.host)).toBe(RS.issuer)
  })

  it('takes the protocol from the nearest proxy’s X-Forwarded-Proto (the login cookie’s Secure)', async () => {
    const { challenge } = pkce()
    const path = authorizePath({
      response_type: 'code',
      client_id: SPA.clientId,
      redirect_uri: SPA.redirectUri,
      scope: 'read',
      state: 'xyz',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const cookieOf = async (issuer: InProcessIssuer, proto: string) => {
      const res = await send(issuer.url, {
        path,
        host: HS.host,
        headers: { 'x-forwarded-proto': proto },
      })
      expect(res.status).toBe(200)
      return res.headers['set-cookie']?.find((c) => /^(__Host-)?tessera_login=/.test(c)) ?? ''
    }
    expect(await cookieOf(issuers['1']!, 'http, https')).toMatch(/^__Host-.*; secure/i)
    expect(await cookieOf(issuers['1']!, 'https, http')).toMatch(/^tessera_login=(?!.*; secure)/i)
    expect(await cookieOf(issuers['1']!, 'https, ')).toMatch(/^tessera_login=(?!.*; secure)/i)
    expect(await cookieOf(issuers.false!, 'https')).toMatch(/^tessera_login=(?!.*; secure)/i)
  })
})
