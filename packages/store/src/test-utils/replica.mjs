// One replica of the issuer for the replica contract: a separate process that opens the shared
// database (an openStore URL: sqlite:PATH or postgres://…) through the built package, says
// "ready", waits for "go" on stdin so that every replica starts at once, races the others through
// COUNT redemptions, rotations (for a client or not), key inserts, marks, secrets or throttle
// reservations (user u<i % 3>, limit 10, with one address, limit 25; the order of the two keys
// alternates) or client registrations (client-<i>-<worker> with acme, at most 25), and prints its
// results as one JSON line.
//
//   node replica.mjs URL redeem|rotate|rotate-for-client|key|mark|secret|reserve|register COUNT WORKER
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import process from 'node:process'
import { openStore } from '../../dist/index.js'

const [url, mode, countText, worker] = process.argv.slice(2)
const count = Number(countText)
const now = Date.UTC(2025, 2, 10, 9)

const store = await openStore(url, { maxConnections: 2 })
process.stdout.write('ready\n')
await once(process.stdin, 'data')

const results = []
for (let i = 0; i < count; i++) {
  if (mode === 'redeem') {
    const family = {
      familyId: `family-${i}-${worker}`,
      tenant: 'acme',
      clientId: 'web',
      sub: 'alice',
      scope: 'openid',
      claims: { worker },
      codeHash: `code-${i}`,
      createdAt: now,
      expiresAt: now + 86_400_000,
    }
    results.push(
      await store.codes.redeemCode('acme', `code-${i}`, now, {
        family,
        tokenHash: `rt-${i}-${worker}`,
      }),
    )
  } else if (mode === 'rotate') {
    const result = await store.refreshTokens.rotateRefreshToken(
      'acme',
      `rt-${i}`,
      `rt-${i}-${worker}`,
      now,
    )
    results.push(result.status)
  } else if (mode === 'rotate-for-client') {
    // Replica 0 presents every token as another client would.
    const client = worker === '0' ? 'other-client' : 'web'
    const result = await store.refreshTokens.rotateRefreshTokenForClient(
      'acme',
      client,
      `rt-${i}`,
      `rt-${i}-${worker}`,
      now,
    )
    results.push(result.status)
  } else if (mode === 'key') {
    results.push(
      await store.keys.insertKeyIfAbsent({
        tenant: 'acme',
        kid: `kid-${i}`,
        alg: 'RS256',
        publicJwk: JSON.stringify({ worker }),
        privateKey: '{}',
        createdAt: now,
        state: 'active',
      }),
    )
  } else if (mode === 'mark') {
    results.push(await store.marks.mark('acme', 'jti', `id-${i}`, now + 60_000, now))
  } else if (mode === 'secret') {
    results.push(await store.secrets.getOrCreateSecret(`secret-${i}`, `value-${i}-${worker}`))
  } else if (mode === 'reserve') {
    const user = { key: `user:acme:u${i % 3}`, limit: 10 }
    const address = { key: 'addr:192.0.2.1', limit: 25 }
    const reservation = await store.throttle.reserveAttempts(
      i % 2 === 0 ? [user, address] : [address, user],
      { now, leaseMs: 60_000 },
    )
    // Which user was granted, or -1.
    results.push(reservation.status === 'granted' ? i % 3 : -1)
  } else if (mode === 'register') {
    const clientId = `client-${i}-${worker}`
    const record = {
      tenant: 'acme',
      clientId,
      registrationTokenHash: createHash('sha256').update(clientId).digest('hex'),
      metadata: { client_name: clientId, redirect_uris: ['https://app.example/cb'] },
      createdAt: now,
      updatedAt: now,
    }
    results.push(await store.clientRegistrations.registerClient(record, 25))
  } else {
    throw new Error(`replica.mjs: unknown mode ${mode}`)
  }
}
await store.close()
process.stdout.write(`${JSON.stringify(results)}\n`)
process.stdin.destroy()
