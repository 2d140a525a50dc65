/**
 * Session cookies count on the client address's password counter only when they name no live
 * session, and lookups still in flight are not failures: many silent sign-ins of one browser at
 * once, from one address, all resume the session.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { CookieJar, OIDC_RS, signInOpenId, silentAuthorize } from '../support/oidc.js'

const T = OIDC_RS
const PARALLEL = 60

describe('parallel single sign-on from one address', { timeout: 120_000 }, () => {
  let issuer: IssuerProcess
  let tmp: ReturnType<typeof tempDir>

  beforeAll(async () => {
    tmp = tempDir()
    // A process of its own, so that the requests are not answered in the test's event loop.
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'oidc'),
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PASSWORD_MAX_FAILURES_PER_ADDRESS: '10',
      },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })

  it(`resumes the session in ${PARALLEL} parallel prompt=none requests`, async () => {
    const { jar } = await signInOpenId(issuer.url, T, T.a)
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () => silentAuthorize(issuer.url, T, T.b, jar)),
    )
    expect(results.filter((r) => r.error !== null)).toEqual([])
    expect(results.every((r) => r.code !== null)).toBe(true)
  })

  it('still counts cookies that name no session against the address', async () => {
    const stranger = new CookieJar()
    const { jar } = await signInOpenId(issuer.url, T, T.a)
    expect(jar.get('tessera_session')).toBeDefined()
    for (let i = 0; i < 10; i++) {
      stranger.set('tessera_session', `${'x'.repeat(42)}${i}`)
      expect((await silentAuthorize(issuer.url, T, T.b, stranger)).error).toBe('login_required')
    }
    // The address is full: no cookie is looked up, the live one included.
    expect((await silentAuthorize(issuer.url, T, T.b, jar)).error).toBe('login_required')
  })
})
