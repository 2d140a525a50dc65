/**
 * The admin API across replicas: two `tessera dev` processes on one
 * PostgreSQL database; a change made through one replica's admin API reaches the other within
 * the key poll.
 */
import { join } from 'node:path'
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_POLL_INTERVAL_MS } from '../../src/issuer.js'
import { ADMIN_TOKEN } from '../support/admin-api.js'
import { eventually } from '../support/eventually.js'
import { send } from '../support/http.js'
import { FIXTURES, JWT_SECRET, RS, startIssuer } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { rsTokenKid } from '../support/keys.js'

// One poll, plus room for a loaded machine to run it.
const PROPAGATION_MS = KEY_POLL_INTERVAL_MS + 2_000

async function jwksKids(replica: IssuerProcess): Promise<string[]> {
  const res = await send(replica.url, { path: '/.well-known/jwks.json', host: RS.host })
  expect(res.status).toBe(200)
  return (res.json as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort()
}

function tokenKid(replica: IssuerProcess): Promise<string | undefined> {
  return rsTokenKid(replica.url)
}

function admin(replica: IssuerProcess, path: string) {
  return send(replica.admin, {
    method: 'POST',
    path,
    host: 'admin.test',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  })
}

describe('the admin API with two replicas on one PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let a: IssuerProcess
  let b: IssuerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    const vars = {
      JWT_SECRET,
      TESSERA_CONFIG: join(FIXTURES, 'basic'),
      DATABASE_URL: database.url,
      ADMIN_TOKEN,
      // Rotated keys sign at once here; keys.publish-ahead.replicas.postgres.e2e.test.ts
      // tests replicas switching together after the wait.
      KEY_PUBLISH_AHEAD_SECONDS: '0',
    }
    a = await startIssuer({ command: 'dev', env: vars })
    b = await startIssuer({ command: 'dev', env: vars })
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await database?.drop()
  })

  it('a rotation through A reaches B within the key poll: JWKS and new tokens', async () => {
    const [first] = await jwksKids(b)
    expect(await tokenKid(b)).toBe(first)
    const rotated = await admin(a, '/admin/tenants/rs/keys/rotate')
    expect(rotated.status, rotated.text).toBe(201)
    const { kid } = rotated.json as { kid: string }
    expect(kid).not.toBe(first)
    const started = Date.now()
    // A serves it at once; B within the poll.
    expect(await tokenKid(a)).toBe(kid)
    await eventually(
      async () => {
        expect(await jwksKids(b)).toEqual([first, kid].sort())
        expect(await tokenKid(b)).toBe(kid)
      },
      { timeoutMs: PROPAGATION_MS, intervalMs: 200 },
    )
    expect(Date.now() - started).toBeLessThan(PROPAGATION_MS)
  })

  it('a revocation through B: A stops publishing the key within the key poll', async () => {
    const before = await jwksKids(a)
    expect(before).toHaveLength(2)
    const active = await tokenKid(a)
    // The retired one: revoked as for a compromise found after a rotation.
    const victim = before.find((kid) => kid !== active)!
    const revoked = await admin(b, `/admin/tenants/rs/keys/${victim}/revoke`)
    expect(revoked.status, revoked.text).toBe(200)
    expect(revoked.json).toMatchObject({ kid: victim, previousState: 'retired', changed: true })
    expect(await jwksKids(b)).toEqual([active])
    await eventually(async () => expect(await jwksKids(a)).toEqual([active]), {
      timeoutMs: PROPAGATION_MS,
      intervalMs: 200,
    })
  })

  it('rotations through both replicas at once never give one kid to two keys', async () => {
    const results = await Promise.all(
      [a, b, a, b, a, b].map((replica) => admin(replica, '/admin/tenants/rs/keys/rotate')),
    )
    expect(results.map((res) => res.status)).toEqual(Array(6).fill(201))
    const listed = await send(a.admin, {
      path: '/admin/tenants/rs/keys',
      host: 'admin.test',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })
    const keys = (listed.json as { keys: { kid: string; state: string }[] }).keys
    expect(new Set(keys.map((key) => key.kid)).size).toBe(keys.length)
    for (const res of results)
      expect(keys.map((key) => key.kid)).toContain((res.json as { kid: string }).kid)
    // Both replicas converge on the key that signs: the newest active one (the list is oldest
    // first). Two rotations that race through two replicas may each leave the other's key active.
    const active = keys.filter((key) => key.state === 'active').at(-1)!.kid
    await eventually(
      async () => {
        expect(await tokenKid(a)).toBe(active)
        expect(await tokenKid(b)).toBe(active)
        expect(await jwksKids(a)).toEqual(await jwksKids(b))
      },
      { timeoutMs: PROPAGATION_MS, intervalMs: 200 },
    )
  })
})
