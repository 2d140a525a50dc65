/**
 * Several replicas on one PostgreSQL: real `tessera dev` processes
 * on different ports sharing a database created for this file, exercised over HTTP on loopback.
 */
import { join } from 'node:path'
import { createTestDatabase, startTcpProxy } from '@tessera/test-support'
import type { TcpProxy } from '@tessera/test-support'
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, RS, startIssuer } from '../support/issuer.js'
import type { IssuerProcess, InProcessIssuer } from '../support/issuer.js'
import { rsAccessToken, rsTokenKid } from '../support/keys.js'
import { openLogin, pkce, signIn, submitLogin } from '../support/oauth.js'

// The replicas listen on different ports: their tenant names its port so they share one `iss`.
const CONFIG = join(FIXTURES, 'replicas')
const ISSUER = 'http://rs.test:8443'
const REDIRECT_URI = 'http://localhost:9000/cb'

/** Whatever serves HTTP: a CLI process or an in-process issuer. */
type Replica = Pick<IssuerProcess, 'url'>

interface Jwks {
  keys: { kid: string }[]
}

async function jwks(replica: Replica): Promise<Jwks> {
  const res = await send(replica.url, { path: '/.well-known/jwks.json', host: RS.host })
  expect(res.status).toBe(200)
  return res.json as Jwks
}

/** Signs alice in at `at` and redeems the code at `redeemAt`: the first refresh token. */
async function signInAndRedeem(at: Replica, redeemAt: Replica): Promise<HttpResponse> {
  const { verifier, challenge } = pkce()
  const { code } = await signIn(at.url, RS.host, {
    clientId: RS.client,
    redirectUri: REDIRECT_URI,
    challenge,
    scope: 'read write',
  })
  return postForm(redeemAt.url, RS.host, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: RS.client,
    client_secret: RS.secret,
  })
}

function refresh(at: Replica, token: string): Promise<HttpResponse> {
  return postForm(at.url, RS.host, {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: RS.client,
    client_secret: RS.secret,
  })
}

const refreshTokenOf = (res: HttpResponse): string =>
  (res.json as { refresh_token: string }).refresh_token

/** Verifies an access token against a replica's JWKS, as a resource server would. */
async function verifyAt(replica: Replica, token: string): Promise<void> {
  const keys = createLocalJWKSet((await jwks(replica)) as Parameters<typeof createLocalJWKSet>[0])
  await jwtVerify(token, keys, { issuer: ISSUER, audience: RS.audience })
}

describe('two replicas sharing one PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let vars: Record<string, string>
  let a: IssuerProcess
  let b: IssuerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    vars = { JWT_SECRET, TESSERA_CONFIG: CONFIG, DATABASE_URL: database.url }
    // Started together on an empty database: both run its migrations and both want today's key.
    ;[a, b] = await Promise.all([
      startIssuer({ command: 'dev', env: vars }),
      startIssuer({ command: 'dev', env: vars }),
    ])
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
  })

  it('creates one key per RS256 tenant and serves the same JWKS from both', async () => {
    const [fromA, fromB] = await Promise.all([jwks(a), jwks(b)])
    expect(fromA.keys).toHaveLength(1)
    expect(fromB).toEqual(fromA)
    const listed = await runCli(['keys', 'list', '--json', '--tenant', 'rs'], {
      TESSERA_CONFIG: CONFIG,
      DATABASE_URL: database.url,
    })
    expect(listed.stderr).toBe('')
    expect(listed.status).toBe(0)
    expect(JSON.stringify(JSON.parse(listed.stdout))).toContain(fromA.keys[0]!.kid)
  })

  it('redeems at one replica a code issued by the other', async () => {
    const res = await signInAndRedeem(a, b)
    expect(res.status).toBe(200)
    const { access_token: accessToken } = res.json as { access_token: string }
    await verifyAt(a, accessToken)
  })

  it('takes at one replica the login form the other showed, once', async () => {
    const request = {
      response_type: 'code',
      client_id: RS.client,
      redirect_uri: REDIRECT_URI,
      state: 'replicas',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }
    const [fromA, fromB] = await Promise.all([
      openLogin(a.url, RS.host, request),
      openLogin(b.url, RS.host, request),
    ])
    const fields = (csrfToken: string) => ({
      csrf_token: csrfToken,
      username: 'alice',
      password: 'alice-password',
    })
    const crossed = await submitLogin(b.url, RS.host, fields(fromA.csrfToken), fromA.cookie)
    expect(crossed.status).toBe(303)
    // Posted to both replicas at once: one code, and the other posts find the form used.
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        submitLogin((i % 2 === 0 ? a : b).url, RS.host, fields(fromB.csrfToken), fromB.cookie),
      ),
    )
    expect(results.filter((res) => res.status === 303)).toHaveLength(1)
    expect(results.filter((res) => res.text.includes('already used'))).toHaveLength(7)
  })

  it('keeps a refresh chain going while it alternates between the replicas', async () => {
    const first = await signInAndRedeem(b, a)
    expect(first.status).toBe(200)
    let token = refreshTokenOf(first)
    const used: string[] = []
    for (let i = 0; i < 8; i++) {
      const replica = i % 2 === 0 ? a : b
      const res = await refresh(replica, token)
      expect(res.status, `refresh ${i} at ${replica === a ? 'a' : 'b'}`).toBe(200)
      used.push(token)
      token = refreshTokenOf(res)
      await verifyAt(i % 2 === 0 ? b : a, (res.json as { access_token: string }).access_token)
    }
    // Every spent token stays spent everywhere: presenting one revokes the chain.
    const replay = await refresh(b, used[3]!)
    expect(replay.status).toBe(400)
    expect(replay.json).toMatchObject({ error: 'invalid_grant' })
    const afterRevocation = await refresh(a, token)
    expect(afterRevocation.status).toBe(400)
  })

  it('lets exactly one of two replicas rotate a refresh token sent to both at once', async () => {
    for (let round = 0; round < 5; round++) {
      const first = await signInAndRedeem(a, a)
      const token = refreshTokenOf(first)
      const results = await Promise.all([refresh(a, token), refresh(b, token)])
      const statuses = results.map((res) => res.status).sort()
      expect(statuses).toEqual([200, 400])
      const winner = results.find((res) => res.status === 200)!
      const loser = results.find((res) => res.status === 400)!
      expect(loser.json).toMatchObject({ error: 'invalid_grant' })
      // The second presentation was a reuse, so the family is revoked: the winner's token too.
      const next = await refresh(round % 2 === 0 ? a : b, refreshTokenOf(winner))
      expect(next.status).toBe(400)
    }
  })

  it('shows a `keys rotate` run from the CLI on both replicas within the poll interval', async () => {
    const before = (await jwks(a)).keys.map((key) => key.kid)
    const rotated = await runCli(['keys', 'rotate', '--tenant', 'rs'], {
      TESSERA_CONFIG: CONFIG,
      DATABASE_URL: database.url,
      // Signs at once: the test below waits for a key published ahead.
      KEY_PUBLISH_AHEAD_SECONDS: '0',
    })
    expect(rotated.stderr).toBe('')
    expect(rotated.status).toBe(0)
    const started = Date.now()
    const deadline = started + KEY_POLL_INTERVAL_MS + 5_000
    const newKid = async (replica: IssuerProcess): Promise<string | undefined> =>
      (await jwks(replica)).keys.map((key) => key.kid).find((kid) => !before.includes(kid))
    let kids = await Promise.all([newKid(a), newKid(b)])
    while (kids.some((kid) => kid === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      kids = await Promise.all([newKid(a), newKid(b)])
    }
    expect(kids[0]).toBeDefined()
    expect(kids[1]).toBe(kids[0])
    // The old key stays published for the grace; the new one signs on both replicas.
    expect((await jwks(a)).keys.map((key) => key.kid)).toEqual(expect.arrayContaining(before))
    expect(await jwks(b)).toEqual(await jwks(a))
    for (const replica of [a, b]) {
      expect(await rsTokenKid(replica.url)).toBe(kids[0])
    }
  })

  it('a key published ahead: both replicas publish it within the poll and switch at its stored instant', async () => {
    const old = await rsTokenKid(a.url)
    const rotated = await runCli(['keys', 'rotate', '--tenant', 'rs'], {
      TESSERA_CONFIG: CONFIG,
      DATABASE_URL: database.url,
      KEY_PUBLISH_AHEAD_SECONDS: '12',
    })
    expect(rotated.status).toBe(0)
    const kid = /new active key (\S+)/.exec(rotated.stdout)?.[1] ?? ''
    const signsFrom = Date.parse(/from (\S+), the old key/.exec(rotated.stdout)?.[1] ?? '')
    expect(Number.isFinite(signsFrom)).toBe(true)
    // Every token of either replica carries the old kid when issued wholly before the stored
    // instant and the new one when issued wholly after it: both switch at that instant, not at
    // their next key poll.
    const seen = new Set<string>()
    while (Date.now() < signsFrom + KEY_POLL_INTERVAL_MS) {
      for (const replica of [a, b]) {
        const token = await rsAccessToken(replica.url)
        const { iat } = decodeJwt(token)
        const tokenKid = decodeProtectedHeader(token).kid ?? ''
        seen.add(tokenKid)
        if ((iat! + 1) * 1000 <= signsFrom) expect(tokenKid).toBe(old)
        if (iat! * 1000 >= signsFrom + 1000) expect(tokenKid).toBe(kid)
      }
      if (Date.now() < signsFrom) {
        // Published on both before it signs, once their poll has read it.
        const published = await Promise.all([jwks(a), jwks(b)])
        if (published.every((set) => set.keys.some((key) => key.kid === kid))) seen.add('published')
      }
    }
    expect([...seen].sort()).toEqual([kid, old, 'published'].sort())
  })
})

describe('a replica killed mid-load', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let doomed: IssuerProcess
  let survivor: IssuerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    const vars = { JWT_SECRET, TESSERA_CONFIG: CONFIG, DATABASE_URL: database.url }
    ;[doomed, survivor] = await Promise.all([
      startIssuer({ command: 'dev', env: vars }),
      startIssuer({ command: 'dev', env: vars }),
    ])
  })
  afterAll(async () => {
    await Promise.all([doomed?.kill(), survivor?.close()])
    await database?.drop()
  })

  it('loses no refresh token it handed out before SIGKILL', async () => {
    /**
     * A client's view of one sign-in: the refresh token it holds, and whether that token is in
     * a request right now. A token whose response never arrived may or may not have been spent
     * by the dying replica; the client cannot know, so only tokens it received and has not
     * presented again are promised to keep working.
     */
    interface Session {
      token: string
      inFlight: boolean
      refreshed: number
    }
    const idle: Session[] = []
    const busy: Session[] = []
    for (let i = 0; i < 16; i++) {
      const res = await signInAndRedeem(doomed, doomed)
      expect(res.status).toBe(200)
      const session = { token: refreshTokenOf(res), inFlight: false, refreshed: 0 }
      ;(i % 2 === 0 ? idle : busy).push(session)
    }
    // Idle sessions took one refresh at the doomed replica and then wait, like a client whose
    // access token is still good.
    for (const session of idle) {
      const res = await refresh(doomed, session.token)
      expect(res.status).toBe(200)
      session.token = refreshTokenOf(res)
    }

    let killed = false
    let serverErrors = 0
    const loops = busy.map(async (session) => {
      while (!killed) {
        session.inFlight = true
        let res: HttpResponse
        try {
          res = await refresh(doomed, session.token)
        } catch (error) {
          // Refused: the request never reached the replica. Otherwise it died mid-request,
          // and whether it spent the token is unknown to the client.
          if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') session.inFlight = false
          return
        }
        if (res.status >= 500) serverErrors++
        expect(res.status).toBe(200)
        session.token = refreshTokenOf(res)
        session.inFlight = false
        session.refreshed++
        // A client refreshes when its access token nears its end, not back to back.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20))
      }
    })
    const deadline = Date.now() + 10_000
    while (busy.reduce((n, s) => n + s.refreshed, 0) < 100 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const before = busy.reduce((n, s) => n + s.refreshed, 0)
    expect(before).toBeGreaterThanOrEqual(100)
    // Clients stop sending first, so the kill catches only the requests already under way. It
    // waits for a moment when some client is between two refreshes, and stops them in that same
    // tick, so there is always a client whose token is promised to survive.
    while (!busy.some((session) => !session.inFlight)) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    killed = true
    await doomed.kill()
    await Promise.all(loops)
    expect(serverErrors).toBe(0)

    const promised = [...idle, ...busy.filter((session) => !session.inFlight)]
    expect(promised.length).toBeGreaterThan(idle.length)
    for (const session of promised) {
      const res = await refresh(survivor, session.token)
      expect(res.status, JSON.stringify(res.json)).toBe(200)
      await verifyAt(survivor, (res.json as { access_token: string }).access_token)
    }
    // A token in doubt gets an OAuth answer, never a server error: either the dying replica
    // had not spent it, or presenting it again is a reuse.
    for (const session of busy.filter((s) => s.inFlight)) {
      const res = await refresh(survivor, session.token)
      expect([200, 400]).toContain(res.status)
      if (res.status === 400) expect(res.json).toMatchObject({ error: 'invalid_grant' })
    }
  })
})

describe('PostgreSQL going away under a running issuer', { timeout: 60_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let proxy: TcpProxy
  let issuer: InProcessIssuer

  beforeAll(async () => {
    database = await createTestDatabase()
    const direct = new URL(database.url)
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
    const url = new URL(database.url)
    url.host = `127.0.0.1:${proxy.port}`
    url.password = 'db-password-never-logged'
    issuer = await startIssuer({ databaseUrl: url.toString(), config: CONFIG })
  })
  afterAll(async () => {
    await issuer?.close()
    await proxy?.close()
    await database?.drop()
  })

  it('answers 503 with Retry-After, and readyz 503, until the database is back', async () => {
    const replica: Replica = issuer
    const first = await signInAndRedeem(replica, replica)
    expect(first.status).toBe(200)
    const token = refreshTokenOf(first)

    await proxy.cut()
    const refused = await refresh(replica, token)
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.headers['cache-control']).toBe('no-store')
    expect(refused.json).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'the service is unavailable; retry later',
    })
    const notReady = await send(issuer.url, { path: '/readyz', host: 'probe' })
    expect(notReady.status).toBe(503)
    expect(notReady.json).toMatchObject({ status: 'not ready', reason: 'store unavailable' })

    await proxy.restore()
    // The failed call changed nothing: the same token rotates now.
    const again = await refresh(replica, token)
    expect(again.status).toBe(200)
    expect((await send(issuer.url, { path: '/readyz', host: 'probe' })).status).toBe(200)
    const log = issuer.logs.join('\n')
    expect(log).toContain('"msg":"database unavailable"')
    expect(log).not.toContain('db-password-never-logged')
    expect(log).not.toContain(token)
  })
})
