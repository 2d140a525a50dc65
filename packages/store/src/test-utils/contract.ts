import { createHash } from 'node:crypto'
import type {
  AuthorizationCodeRecord,
  FamilyIssue,
  RefreshFamily,
  SessionRecord,
} from '@tessera/grants'
import type { StoredKey } from '@tessera/keys'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeCodeBoundContract } from './code-bound-contract.js'
import { StoreError } from '../errors.js'
import {
  attemptsHeld,
  describeThrottleContract,
  failOne,
  failuresOf,
  reserveOne,
} from './throttle-contract.js'

export {
  attemptsHeld,
  clearOne,
  failOne,
  failuresOf,
  releaseOne,
  reserveOne,
} from './throttle-contract.js'
import type { ParsedConfigEntry } from '../parsed-config.js'
import type { Store } from '../store.js'
import { describeFailureCounterContract } from './failure-counter-contract.js'
import { describePublishAheadContract } from './contract-publish-ahead.js'

export const t0 = Date.UTC(2025, 2, 10, 9)
const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

/** A key row; the store treats the JWK texts as opaque, so they need not be real keys. */
export function storedKey(fields: Partial<StoredKey> = {}): StoredKey {
  const kid = fields.kid ?? '2025-03-10'
  return {
    tenant: 'acme',
    kid,
    alg: 'RS256',
    publicJwk: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB' }),
    privateKey: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB', d: `d-${kid}` }),
    createdAt: t0,
    state: 'active',
    ...fields,
  }
}

/** Hex SHA-256, as the grants store codes and refresh tokens. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** An authorization code of acme, issued at t0 for ten minutes, with PKCE. */
export function codeRecord(fields: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    codeHash: sha256('code-1'),
    tenant: 'acme',
    clientId: 'web',
    redirectUri: 'https://app.example/callback',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    scope: 'openid orders:read',
    sub: 'alice',
    claims: { email: 'alice@example.com', roles: ['admin'], profile: { locale: 'fr' } },
    createdAt: t0,
    expiresAt: t0 + 10 * minute,
    ...fields,
  }
}

/** A refresh family of acme, started at t0 for 30 days. */
export function refreshFamily(fields: Partial<RefreshFamily> = {}): RefreshFamily {
  return {
    familyId: 'family-1',
    tenant: 'acme',
    clientId: 'web',
    sub: 'alice',
    scope: 'openid orders:read',
    claims: { email: 'alice@example.com' },
    codeHash: sha256('code-1'),
    createdAt: t0,
    expiresAt: t0 + 30 * day,
    ...fields,
  }
}

/** A sign-in session of acme, opened at t0 for eight hours. */
export function sessionRecord(fields: Partial<SessionRecord> = {}): SessionRecord {
  return {
    idHash: sha256('session-1'),
    tenant: 'acme',
    sid: 'sid-1',
    sub: 'alice',
    claims: { email: 'alice@example.com', name: 'Alice', roles: ['admin'] },
    authTime: t0,
    createdAt: t0,
    expiresAt: t0 + 8 * hour,
    ...fields,
  }
}

/**
 * `rounds` logouts (on `ender`), each racing a redemption of a code of its sid (on `redeemer`);
 * two stores on one database stand for two replicas. Whichever wins, no family of an ended sid
 * is left live: either the redemption fails, or its family is revoked by the logout. Answers how
 * many redemptions succeeded, so that a caller can tell which orders it saw.
 */
export async function raceLogoutAndRedemption(
  redeemer: Store,
  ender: Store,
  rounds: number,
): Promise<number> {
  const at = t0 + minute
  const codeHash = (i: number): string => sha256(`race-code-${i}`)
  const indexes = Array.from({ length: rounds }, (_, i) => i)
  for (const i of indexes) {
    const sid = `race-sid-${i}`
    await ender.sessions.createSession(sessionRecord({ idHash: sha256(`race-${i}`), sid }))
    await redeemer.codes.saveCode(codeRecord({ codeHash: codeHash(i), sid, authTime: t0 }))
  }
  const outcomes = await Promise.all(
    indexes.map(async (i) => {
      const sid = `race-sid-${i}`
      const redeem = (): Promise<boolean> =>
        redeemer.codes.redeemCode('acme', codeHash(i), at, {
          family: refreshFamily({
            familyId: `race-family-${i}`,
            codeHash: codeHash(i),
            sid,
            authTime: t0,
          }),
          tokenHash: sha256(`race-rt-${i}`),
        })
      const end = (): Promise<boolean> => ender.sessions.endSession('acme', sid, at)
      // Half the rounds ask for the logout first.
      if (i % 2 === 0) {
        const [redeemed, ended] = await Promise.all([redeem(), end()])
        return { i, redeemed, ended }
      }
      const [ended, redeemed] = await Promise.all([end(), redeem()])
      return { i, redeemed, ended }
    }),
  )
  for (const { i, redeemed, ended } of outcomes) {
    expect(ended, `round ${i}`).toBe(true)
    const family = await ender.refreshTokens.findFamily('acme', `race-family-${i}`)
    if (redeemed) expect(family?.revokedAt, `round ${i}`).toBe(at)
    else expect(family, `round ${i}`).toBeUndefined()
    expect((await ender.codes.findCode('acme', codeHash(i)))?.consumedAt, `round ${i}`).toBe(at)
    const token = await ender.refreshTokens.findRefreshToken('acme', sha256(`race-rt-${i}`))
    if (redeemed) expect(token?.family.revokedAt, `round ${i}`).toBe(at)
  }
  return outcomes.filter(({ redeemed }) => redeemed).length
}

/**
 * Starts a family the only way the port allows: saves a code of its own (live for a day) and
 * redeems it at t0 with the family and its first token.
 */
export async function startFamily(
  store: Store,
  family: RefreshFamily,
  tokenHash: string,
): Promise<void> {
  const codeHash = sha256(`code-of-${family.familyId}`)
  await store.codes.saveCode(codeRecord({ tenant: family.tenant, codeHash, expiresAt: t0 + day }))
  const issue: FamilyIssue = { family, tokenHash }
  if (!(await store.codes.redeemCode(family.tenant, codeHash, t0, issue))) {
    throw new Error('startFamily: the code was not redeemed')
  }
}

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreError)
  return error as StoreError
}

/**
 * The behaviour every Store adapter owes the ports of @tessera/keys and @tessera/grants. Each
 * adapter's test file calls this with a factory that opens a fresh, empty store.
 */
export function describeStoreContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store: contract`, () => {
    let store: Store

    beforeEach(async () => {
      store = await open()
    })

    afterEach(async () => {
      await store.close()
    })

    describePublishAheadContract(() => store)

    describe('keys', () => {
      it('inserts a (tenant, kid) once; a second insert returns false and keeps the first', async () => {
        const first = storedKey()
        const second = storedKey({ publicJwk: '{"other":true}', createdAt: t0 + 1 })
        expect(await store.keys.insertKeyIfAbsent(first)).toBe(true)
        expect(await store.keys.insertKeyIfAbsent(second)).toBe(false)
        expect(await store.keys.listKeys('acme')).toEqual([first])
      })

      it('round-trips every field, with and without retiredAt', async () => {
        const retired = storedKey({ kid: '2025-03-09', state: 'retired', retiredAt: t0 - minute })
        const active = storedKey()
        await store.keys.insertKeyIfAbsent(retired)
        await store.keys.insertKeyIfAbsent(active)
        const listed = await store.keys.listKeys('acme')
        expect(listed).toStrictEqual([retired, active])
        expect(listed[1]).not.toHaveProperty('retiredAt')
      })

      it('lists keys oldest first, then by kid', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-12', createdAt: t0 + 2 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10.2', createdAt: t0 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-11', createdAt: t0 + 1 }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 }))
        const kids = (await store.keys.listKeys('acme')).map((key) => key.kid)
        expect(kids).toEqual(['2025-03-10', '2025-03-10.2', '2025-03-11', '2025-03-12'])
      })

      it('keeps tenants apart: the same kid names a key in each', async () => {
        const acme = storedKey({ tenant: 'acme' })
        const globex = storedKey({ tenant: 'globex', publicJwk: '{"globex":true}' })
        expect(await store.keys.insertKeyIfAbsent(acme)).toBe(true)
        expect(await store.keys.insertKeyIfAbsent(globex)).toBe(true)
        expect(await store.keys.listKeys('acme')).toEqual([acme])
        expect(await store.keys.listKeys('globex')).toEqual([globex])
        expect(await store.keys.listKeys('initech')).toEqual([])

        await store.keys.updateKeyState('acme', acme.kid, 'revoked', undefined)
        await store.keys.deleteKey('globex', globex.kid)
        expect(await store.keys.listKeys('acme')).toMatchObject([{ state: 'revoked' }])
        expect(await store.keys.listKeys('globex')).toEqual([])
      })

      it('updates the state and retiredAt of one key', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))

        await store.keys.updateKeyState('acme', '2025-03-09', 'retired', t0 + minute)
        expect(await store.keys.listKeys('acme')).toMatchObject([
          { kid: '2025-03-09', state: 'retired', retiredAt: t0 + minute },
          { kid: '2025-03-10', state: 'active' },
        ])

        await store.keys.updateKeyState('acme', '2025-03-09', 'revoked', undefined)
        const [revoked] = await store.keys.listKeys('acme')
        expect(revoked?.state).toBe('revoked')
        expect(revoked).not.toHaveProperty('retiredAt')
      })

      it('deletes one key, public and private parts', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10', createdAt: t0 + 1 }))
        await store.keys.deleteKey('acme', '2025-03-09')
        expect((await store.keys.listKeys('acme')).map((key) => key.kid)).toEqual(['2025-03-10'])
        // Nothing of the old row lingers; the store would take the kid again (the key ring never
        // asks, since it chooses kids past listPrunedKids).
        expect(await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))).toBe(true)
      })

      it('remembers the kids of deleted keys, per tenant, sorted', async () => {
        expect(await store.keys.listPrunedKids('acme')).toEqual([])
        for (const kid of ['2025-03-10.2', '2025-03-09', '2025-03-10']) {
          await store.keys.insertKeyIfAbsent(storedKey({ kid }))
        }
        await store.keys.insertKeyIfAbsent(storedKey({ tenant: 'globex', kid: '2025-03-08' }))
        await store.keys.deleteKey('acme', '2025-03-10.2')
        await store.keys.deleteKey('acme', '2025-03-09')
        await store.keys.deleteKey('acme', 'missing')
        await store.keys.deleteKey('globex', '2025-03-08')
        expect(await store.keys.listPrunedKids('acme')).toEqual(['2025-03-09', '2025-03-10.2'])
        expect(await store.keys.listPrunedKids('globex')).toEqual(['2025-03-08'])
        // A kid deleted twice (re-inserted in between) is listed once.
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.deleteKey('acme', '2025-03-09')
        expect(await store.keys.listPrunedKids('acme')).toEqual(['2025-03-09', '2025-03-10.2'])
      })

      it('retires a key only while it is active', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-08' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09', state: 'revoked' }))
        await store.keys.insertKeyIfAbsent(
          storedKey({ kid: '2025-03-10', state: 'retired', retiredAt: t0 }),
        )
        expect(await store.keys.retireKey('acme', '2025-03-08', t0 + minute)).toBe(true)
        expect(await store.keys.retireKey('acme', '2025-03-08', t0 + 2 * minute)).toBe(false)
        expect(await store.keys.retireKey('acme', '2025-03-09', t0 + minute)).toBe(false)
        expect(await store.keys.retireKey('acme', '2025-03-10', t0 + minute)).toBe(false)
        expect(await store.keys.retireKey('acme', 'missing', t0 + minute)).toBe(false)
        expect(await store.keys.retireKey('globex', '2025-03-10', t0 + minute)).toBe(false)
        expect(await store.keys.listKeys('acme')).toMatchObject([
          { kid: '2025-03-08', state: 'retired', retiredAt: t0 + minute },
          { kid: '2025-03-09', state: 'revoked' },
          { kid: '2025-03-10', state: 'retired', retiredAt: t0 },
        ])
        const [, revoked] = await store.keys.listKeys('acme')
        expect(revoked).not.toHaveProperty('retiredAt')
      })

      it('replaces a private key only if it still holds the expected text', async () => {
        const key = storedKey()
        await store.keys.insertKeyIfAbsent(key)
        expect(await store.keys.updatePrivateKey('acme', key.kid, 'stale', 'enc:v1:x')).toBe(false)
        expect(await store.keys.updatePrivateKey('acme', key.kid, key.privateKey, 'enc:v1:a')).toBe(
          true,
        )
        expect(await store.keys.updatePrivateKey('acme', key.kid, key.privateKey, 'enc:v1:b')).toBe(
          false,
        )
        expect(await store.keys.updatePrivateKey('acme', 'missing', '', 'x')).toBe(false)
        expect(await store.keys.listKeys('acme')).toEqual([{ ...key, privateKey: 'enc:v1:a' }])
      })

      it('treats an update or delete of a missing key as a no-op', async () => {
        await store.keys.updateKeyState('acme', 'missing', 'revoked', undefined)
        await store.keys.deleteKey('acme', 'missing')
        expect(await store.keys.listKeys('acme')).toEqual([])
      })

      it('lists the keys of many tenants in one call, by tenant then oldest first', async () => {
        await store.keys.insertKeyIfAbsent(storedKey({ tenant: 'globex', kid: '2025-03-11' }))
        await store.keys.insertKeyIfAbsent(storedKey({ tenant: 'acme', kid: '2025-03-12' }))
        await store.keys.insertKeyIfAbsent(
          storedKey({ tenant: 'acme', kid: '2025-03-09', createdAt: t0 - day }),
        )
        await store.keys.insertKeyIfAbsent(storedKey({ tenant: 'initech', kid: '2025-03-10' }))
        const listed = await store.keys.listKeysOfTenants(['globex', 'acme', 'umbrella'])
        expect(listed.map((key) => [key.tenant, key.kid])).toEqual([
          ['acme', '2025-03-09'],
          ['acme', '2025-03-12'],
          ['globex', '2025-03-11'],
        ])
        expect(listed[1]).toStrictEqual(storedKey({ tenant: 'acme', kid: '2025-03-12' }))
        expect(await store.keys.listKeysOfTenants([])).toEqual([])
        // Names are data, never SQL: a quote or a comma is one more name.
        expect(await store.keys.listKeysOfTenants(["acme'", 'acme,globex'])).toEqual([])
      })

      it('lists the keys of thousands of tenants in one call', async () => {
        const names = Array.from({ length: 5000 }, (_, i) => `tenant-${i}`)
        for (const tenant of names.slice(0, 3)) {
          await store.keys.insertKeyIfAbsent(storedKey({ tenant }))
        }
        const listed = await store.keys.listKeysOfTenants(names)
        expect(listed.map((key) => key.tenant)).toEqual(['tenant-0', 'tenant-1', 'tenant-2'])
      })

      it('reports each tenant whose keys were written after a cursor, once', async () => {
        const since = await store.keys.keyChangeCursor()
        expect(await store.keys.keyChangesSince(since)).toEqual({ cursor: since, tenants: [] })

        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-10' }))
        await store.keys.insertKeyIfAbsent(storedKey({ tenant: 'globex' }))
        const first = await store.keys.keyChangesSince(since)
        expect(first.tenants.sort()).toEqual(['acme', 'globex'])
        expect(first.cursor).toBeGreaterThan(since)
        expect(await store.keys.keyChangeCursor()).toBe(first.cursor)
        expect(await store.keys.keyChangesSince(first.cursor)).toEqual({
          cursor: first.cursor,
          tenants: [],
        })

        // Writes that change nothing are not changes.
        await store.keys.insertKeyIfAbsent(storedKey({ kid: '2025-03-09' }))
        await store.keys.retireKey('globex', 'missing', t0)
        await store.keys.updateKeyState('initech', 'missing', 'revoked', undefined)
        await store.keys.updatePrivateKey('acme', '2025-03-09', 'stale', 'x')
        await store.keys.deleteKey('acme', 'missing')
        expect((await store.keys.keyChangesSince(first.cursor)).tenants).toEqual([])

        // Each kind of write is one.
        const writes: [string, () => Promise<unknown>][] = [
          ['retireKey', () => store.keys.retireKey('acme', '2025-03-09', t0)],
          ['updateKeyState', () => store.keys.updateKeyState('acme', '2025-03-09', 'revoked', t0)],
          [
            'updatePrivateKey',
            () =>
              store.keys.updatePrivateKey(
                'globex',
                '2025-03-10',
                storedKey().privateKey,
                'enc:v1:x',
              ),
          ],
          ['deleteKey', () => store.keys.deleteKey('acme', '2025-03-09')],
        ]
        let cursor = first.cursor
        for (const [name, write] of writes) {
          await write()
          const changes = await store.keys.keyChangesSince(cursor)
          expect({ name, tenants: changes.tenants.length }).toEqual({ name, tenants: 1 })
          expect(changes.cursor).toBeGreaterThan(cursor)
          cursor = changes.cursor
        }
        // From an older cursor, a tenant written several times is reported once.
        expect((await store.keys.keyChangesSince(first.cursor)).tenants.sort()).toEqual([
          'acme',
          'globex',
        ])
      })

      it('throws a TypeError for a cursor that is not a non-negative integer', async () => {
        for (const cursor of [-1, 1.5, Number.NaN]) {
          await expect(store.keys.keyChangesSince(cursor)).rejects.toThrow(TypeError)
        }
      })

      it('hands out copies: changing a listed key changes nothing stored', async () => {
        const key = storedKey()
        await store.keys.insertKeyIfAbsent(key)
        key.state = 'revoked'
        const [listed] = await store.keys.listKeys('acme')
        if (listed) listed.state = 'retired'
        expect(await store.keys.listKeys('acme')).toMatchObject([{ state: 'active' }])
      })
    })

    describeThrottleContract(() => store)

    describeFailureCounterContract(() => store)

    describeCodeBoundContract(() => store)

    describe('authorization codes', () => {
      it('saves a code and finds it by (tenant, hash) with every field intact', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
        expect(await store.codes.findCode('acme', sha256('code-2'))).toBeUndefined()
      })

      it('leaves absent optional fields out, even when given as undefined', async () => {
        const code = codeRecord({ codeChallenge: undefined, consumedAt: undefined, claims: {} })
        await store.codes.saveCode(code)
        const found = await store.codes.findCode('acme', code.codeHash)
        expect(found).not.toHaveProperty('codeChallenge')
        expect(found).not.toHaveProperty('consumedAt')
        expect(found?.claims).toStrictEqual({})
      })

      it('redeems a code once: true, then false', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        expect(await store.codes.redeemCode('acme', code.codeHash, t0 + minute, undefined)).toBe(
          true,
        )
        expect(await store.codes.redeemCode('acme', code.codeHash, t0 + minute, undefined)).toBe(
          false,
        )
        expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual({
          ...code,
          consumedAt: t0 + minute,
        })
      })

      it('redeems a code up to the millisecond before it expires, and never after', async () => {
        const live = codeRecord({ codeHash: sha256('live') })
        const expired = codeRecord({ codeHash: sha256('expired') })
        await store.codes.saveCode(live)
        await store.codes.saveCode(expired)
        expect(
          await store.codes.redeemCode('acme', live.codeHash, live.expiresAt - 1, undefined),
        ).toBe(true)
        expect(
          await store.codes.redeemCode('acme', expired.codeHash, expired.expiresAt, undefined),
        ).toBe(false)
        // An expired code is refused, not consumed: it is not mistaken for a replay later.
        expect(await store.codes.findCode('acme', expired.codeHash)).not.toHaveProperty(
          'consumedAt',
        )
      })

      it('does not redeem an unknown code', async () => {
        expect(await store.codes.redeemCode('acme', sha256('nope'), t0, undefined)).toBe(false)
      })

      it('creates the family and its first token exactly when the redemption is given one', async () => {
        const withIssue = codeRecord({ codeHash: sha256('with') })
        const without = codeRecord({ codeHash: sha256('without') })
        await store.codes.saveCode(withIssue)
        await store.codes.saveCode(without)
        const family = refreshFamily({ codeHash: withIssue.codeHash })
        expect(
          await store.codes.redeemCode('acme', withIssue.codeHash, t0 + minute, {
            family,
            tokenHash: sha256('rt-1'),
          }),
        ).toBe(true)
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-1'))).toStrictEqual({
          token: { tokenHash: sha256('rt-1'), familyId: family.familyId, createdAt: t0 + minute },
          family,
        })

        expect(await store.codes.redeemCode('acme', without.codeHash, t0 + minute, undefined)).toBe(
          true,
        )
        // A redemption that loses creates nothing, whatever it was given.
        const late = refreshFamily({ familyId: 'family-late', codeHash: withIssue.codeHash })
        expect(
          await store.codes.redeemCode('acme', withIssue.codeHash, t0 + minute, {
            family: late,
            tokenHash: sha256('rt-late'),
          }),
        ).toBe(false)
        expect(
          await store.refreshTokens.findRefreshToken('acme', sha256('rt-late')),
        ).toBeUndefined()
        await store.refreshTokens.revokeFamiliesByCode('acme', withIssue.codeHash, t0 + 2 * minute)
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-1'))).toMatchObject({
          family: { familyId: family.familyId, revokedAt: t0 + 2 * minute },
        })
      })

      it('creates a family without a token when the redemption gives none', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        const family = refreshFamily({ familyId: 'no-token', codeHash: code.codeHash })
        expect(await store.codes.redeemCode('acme', code.codeHash, t0, { family })).toBe(true)
        expect(await store.refreshTokens.findFamily('acme', 'no-token')).toStrictEqual(family)
        // A replay of the code revokes it like any other family of the code.
        await store.refreshTokens.revokeFamiliesByCode('acme', code.codeHash, t0 + minute)
        expect(await store.refreshTokens.findFamily('acme', 'no-token')).toStrictEqual({
          ...family,
          revokedAt: t0 + minute,
        })
        // A second redemption loses and creates nothing, with or without a token.
        const late = refreshFamily({ familyId: 'late', codeHash: code.codeHash })
        expect(await store.codes.redeemCode('acme', code.codeHash, t0, { family: late })).toBe(
          false,
        )
        expect(await store.refreshTokens.findFamily('acme', 'late')).toBeUndefined()
      })

      it('lets exactly one of 20 concurrent redemptions win, and creates one family', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.codes.redeemCode('acme', code.codeHash, t0 + minute, {
              family: refreshFamily({ familyId: `family-${i}` }),
              tokenHash: sha256(`rt-${i}`),
            }),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        const found = await Promise.all(
          results.map((_, i) => store.refreshTokens.findRefreshToken('acme', sha256(`rt-${i}`))),
        )
        const winner = results.indexOf(true)
        expect(found.filter((f) => f !== undefined)).toHaveLength(1)
        expect(found[winner]?.family.familyId).toBe(`family-${winner}`)
      })

      it('consumes nothing when the family cannot be created', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        await startFamily(store, refreshFamily({ familyId: 'taken' }), sha256('rt-taken'))
        for (const issue of [
          { family: refreshFamily({ familyId: 'taken' }), tokenHash: sha256('rt-new') },
          { family: refreshFamily({ familyId: 'new' }), tokenHash: sha256('rt-taken') },
        ]) {
          const error = await storeError(store.codes.redeemCode('acme', code.codeHash, t0, issue))
          expect(error.code).toBe('ERR_STORE_CONFLICT')
        }
        expect(await store.codes.findCode('acme', code.codeHash)).not.toHaveProperty('consumedAt')
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-new'))).toBeUndefined()
        expect(
          await store.codes.redeemCode('acme', code.codeHash, t0, {
            family: refreshFamily({ familyId: 'new' }),
            tokenHash: sha256('rt-new'),
          }),
        ).toBe(true)
      })

      it('refuses a second save of one code with ERR_STORE_CONFLICT and keeps the first', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        const error = await storeError(store.codes.saveCode(codeRecord({ sub: 'mallory' })))
        expect(error.code).toBe('ERR_STORE_CONFLICT')
        expect(error.message).not.toContain(code.codeHash)
        expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
      })

      it('throws a TypeError for a family of another tenant or a time that is not an integer', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        const foreign = { family: refreshFamily({ tenant: 'globex' }), tokenHash: sha256('rt') }
        await expect(store.codes.redeemCode('acme', code.codeHash, t0, foreign)).rejects.toThrow(
          TypeError,
        )
        await expect(
          store.codes.redeemCode('acme', code.codeHash, t0 + 0.5, undefined),
        ).rejects.toThrow(TypeError)
        await expect(
          store.codes.saveCode(codeRecord({ codeHash: sha256('nan'), expiresAt: Number.NaN })),
        ).rejects.toThrow(TypeError)
        expect(await store.codes.findCode('acme', code.codeHash)).not.toHaveProperty('consumedAt')
        expect(await store.codes.findCode('acme', sha256('nan'))).toBeUndefined()
      })

      it('hands out copies: changing a found code changes nothing stored', async () => {
        const code = codeRecord()
        await store.codes.saveCode(code)
        code.claims.email = 'mallory@example.com'
        const found = await store.codes.findCode('acme', code.codeHash)
        if (found) (found.claims.roles as string[]).push('root')
        expect((await store.codes.findCode('acme', code.codeHash))?.claims).toStrictEqual(
          codeRecord().claims,
        )
      })
    })

    describe('refresh tokens', () => {
      const family = refreshFamily()
      const first = sha256('rt-1')
      const second = sha256('rt-2')

      beforeEach(async () => {
        await startFamily(store, family, first)
      })

      it('finds a token with its family, and nothing for an unknown hash', async () => {
        expect(await store.refreshTokens.findRefreshToken('acme', first)).toStrictEqual({
          token: { tokenHash: first, familyId: family.familyId, createdAt: t0 },
          family,
        })
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('nope'))).toBeUndefined()
      })

      it('rotates a live token: the old one is spent, the new one is live in the same family', async () => {
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour),
        ).toStrictEqual({ status: 'rotated', family })
        expect(await store.refreshTokens.findRefreshToken('acme', first)).toMatchObject({
          token: { spentAt: t0 + hour },
        })
        expect(await store.refreshTokens.findRefreshToken('acme', second)).toStrictEqual({
          token: { tokenHash: second, familyId: family.familyId, createdAt: t0 + hour },
          family,
        })
        const third = sha256('rt-3')
        expect(
          (await store.refreshTokens.rotateRefreshToken('acme', second, third, t0 + 2 * hour))
            .status,
        ).toBe('rotated')
      })

      it('answers reused for a spent token and revokes the whole family', async () => {
        await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
        expect(
          await store.refreshTokens.rotateRefreshToken(
            'acme',
            first,
            sha256('rt-x'),
            t0 + 2 * hour,
          ),
        ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
        // The live token dies with its family.
        expect(await store.refreshTokens.findRefreshToken('acme', second)).toMatchObject({
          token: { tokenHash: second },
          family: { revokedAt: t0 + 2 * hour },
        })
        expect(
          await store.refreshTokens.rotateRefreshToken(
            'acme',
            second,
            sha256('rt-y'),
            t0 + 3 * hour,
          ),
        ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + 2 * hour } })
      })

      it('keeps answering reused for a spent token, with the time of the first revocation', async () => {
        await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
        await store.refreshTokens.rotateRefreshToken('acme', first, sha256('a'), t0 + 2 * hour)
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', first, sha256('b'), t0 + 3 * hour),
        ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
      })

      it('answers inactive for a live token of a revoked family and changes nothing', async () => {
        await store.refreshTokens.revokeFamily('acme', family.familyId, t0 + hour)
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + 2 * hour),
        ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + hour } })
        expect(await store.refreshTokens.findRefreshToken('acme', first)).toMatchObject({
          token: { tokenHash: first },
        })
        expect(
          (await store.refreshTokens.findRefreshToken('acme', first))?.token,
        ).not.toHaveProperty('spentAt')
        expect(await store.refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
      })

      it('answers inactive once the family has expired, spent token or not, and changes nothing', async () => {
        await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour)
        for (const presented of [first, second]) {
          expect(
            await store.refreshTokens.rotateRefreshToken(
              'acme',
              presented,
              sha256('rt-x'),
              family.expiresAt,
            ),
          ).toStrictEqual({ status: 'inactive', family })
        }
        expect(
          (await store.refreshTokens.findRefreshToken('acme', second))?.token,
        ).not.toHaveProperty('spentAt')
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('rt-x'))).toBeUndefined()
      })

      it('answers not_found for an unknown token', async () => {
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', sha256('nope'), second, t0),
        ).toEqual({ status: 'not_found' })
        expect(await store.refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
      })

      it('lets one of 20 concurrent rotations of a token win; the rest revoke the family', async () => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.refreshTokens.rotateRefreshToken('acme', first, sha256(`next-${i}`), t0 + hour),
          ),
        )
        const statuses = results.map((result) => result.status)
        expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
        expect(statuses.filter((status) => status === 'reused')).toHaveLength(19)
        const found = await Promise.all(
          results.map((_, i) => store.refreshTokens.findRefreshToken('acme', sha256(`next-${i}`))),
        )
        expect(found.filter((f) => f !== undefined)).toHaveLength(1)
        expect(found[statuses.indexOf('rotated')]?.family.revokedAt).toBe(t0 + hour)
      })

      it('refuses a new hash that is already a token, and changes nothing', async () => {
        await startFamily(store, refreshFamily({ familyId: 'family-2' }), second)
        const error = await storeError(
          store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + hour),
        )
        expect(error.code).toBe('ERR_STORE_CONFLICT')
        expect(
          (await store.refreshTokens.findRefreshToken('acme', first))?.token,
        ).not.toHaveProperty('spentAt')
        expect(await store.refreshTokens.findRefreshToken('acme', second)).toMatchObject({
          family: { familyId: 'family-2' },
        })
      })

      it('finds a family by id in any state, and nothing for an unknown id or tenant', async () => {
        expect(await store.refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
        expect(await store.refreshTokens.findFamily('acme', 'no-such-family')).toBeUndefined()
        expect(await store.refreshTokens.findFamily('globex', family.familyId)).toBeUndefined()
        await store.refreshTokens.rotateRefreshToken('acme', first, second, t0 + minute)
        await store.refreshTokens.rotateRefreshToken('acme', first, sha256('rt-3'), t0 + hour)
        expect(await store.refreshTokens.findFamily('acme', family.familyId)).toStrictEqual({
          ...family,
          revokedAt: t0 + hour,
        })
        const found = await store.refreshTokens.findFamily('acme', family.familyId)
        if (found) found.claims.email = 'mallory@example.com'
        expect(
          (await store.refreshTokens.findFamily('acme', family.familyId))?.claims,
        ).toStrictEqual(family.claims)
      })

      it('revokes one family, keeping the time of its first revocation', async () => {
        await startFamily(store, refreshFamily({ familyId: 'family-2' }), second)
        await store.refreshTokens.revokeFamily('acme', family.familyId, t0 + hour)
        await store.refreshTokens.revokeFamily('acme', family.familyId, t0 + 2 * hour)
        await store.refreshTokens.revokeFamily('acme', 'no-such-family', t0 + hour)
        expect((await store.refreshTokens.findRefreshToken('acme', first))?.family.revokedAt).toBe(
          t0 + hour,
        )
        expect(
          (await store.refreshTokens.findRefreshToken('acme', second))?.family,
        ).not.toHaveProperty('revokedAt')
      })

      it('revokes every family issued from one code, and only those', async () => {
        const replayed = family.codeHash
        await startFamily(store, refreshFamily({ familyId: 'same-code' }), sha256('rt-same'))
        await startFamily(
          store,
          refreshFamily({ familyId: 'other-code', codeHash: sha256('code-2') }),
          sha256('rt-other'),
        )
        await startFamily(
          store,
          refreshFamily({ familyId: 'no-code', codeHash: undefined }),
          sha256('rt-none'),
        )
        await store.refreshTokens.revokeFamily('acme', 'same-code', t0 + hour)
        await store.refreshTokens.revokeFamiliesByCode('acme', replayed ?? '', t0 + 2 * hour)
        const revokedAt = async (tokenHash: string): Promise<number | undefined> =>
          (await store.refreshTokens.findRefreshToken('acme', tokenHash))?.family.revokedAt
        expect(await revokedAt(first)).toBe(t0 + 2 * hour)
        expect(await revokedAt(sha256('rt-same'))).toBe(t0 + hour)
        expect(await revokedAt(sha256('rt-other'))).toBeUndefined()
        expect(await revokedAt(sha256('rt-none'))).toBeUndefined()
        expect(
          (await store.refreshTokens.findRefreshToken('acme', sha256('rt-none')))?.family,
        ).not.toHaveProperty('codeHash')
      })
    })

    describe('tenants', () => {
      it('keeps codes, families and tokens of two tenants apart', async () => {
        for (const tenant of ['acme', 'globex']) {
          await store.codes.saveCode(codeRecord({ tenant, sub: `${tenant}-user` }))
          await startFamily(store, refreshFamily({ tenant }), sha256('rt-1'))
          await startFamily(store, refreshFamily({ tenant, familyId: 'family-2' }), sha256('rt-2'))
        }
        const code = sha256('code-1')
        expect((await store.codes.findCode('globex', code))?.sub).toBe('globex-user')
        expect(await store.codes.findCode('initech', code)).toBeUndefined()

        expect(await store.codes.redeemCode('acme', code, t0, undefined)).toBe(true)
        expect(await store.codes.findCode('globex', code)).not.toHaveProperty('consumedAt')

        expect(
          (await store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('n'), t0))
            .status,
        ).toBe('rotated')
        await store.refreshTokens.revokeFamily('acme', 'family-2', t0)
        await store.refreshTokens.revokeFamiliesByCode('acme', code, t0)
        expect(await store.refreshTokens.findRefreshToken('globex', sha256('n'))).toBeUndefined()
        expect(
          await store.refreshTokens.rotateRefreshToken('initech', sha256('rt-1'), sha256('m'), t0),
        ).toEqual({ status: 'not_found' })
        const globex = await store.refreshTokens.findRefreshToken('globex', sha256('rt-1'))
        expect(globex?.token).not.toHaveProperty('spentAt')
        expect(globex?.family).not.toHaveProperty('revokedAt')
        expect(
          (await store.refreshTokens.findRefreshToken('globex', sha256('rt-2')))?.family,
        ).not.toHaveProperty('revokedAt')
      })
    })

    describe('OpenID Connect fields of codes and families', () => {
      const oidc = { nonce: 'n-0S6_WzA2Mj', sid: 'sid-1', authTime: t0 - minute }

      it('keeps nonce, sid and authTime of a code, and leaves them out when absent', async () => {
        const code = codeRecord({ ...oidc })
        await store.codes.saveCode(code)
        expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual(code)
        const plain = codeRecord({
          codeHash: sha256('plain'),
          nonce: undefined,
          sid: undefined,
          authTime: undefined,
        })
        await store.codes.saveCode(plain)
        const found = await store.codes.findCode('acme', plain.codeHash)
        expect(found).toStrictEqual(codeRecord({ codeHash: sha256('plain') }))
        for (const field of ['nonce', 'sid', 'authTime']) expect(found).not.toHaveProperty(field)
      })

      it('echoes a nonce byte for byte: U+0000, quotes, astral characters, 1024 of them', async () => {
        const nonces = ['a\u0000b', '"\'<>&\\ %00', '\u{1F600}é\u00a0', 'x'.repeat(1024), '']
        for (const [i, nonce] of nonces.entries()) {
          const code = codeRecord({ codeHash: sha256(`nonce-${i}`), nonce })
          await store.codes.saveCode(code)
          expect((await store.codes.findCode('acme', code.codeHash))?.nonce).toBe(nonce)
        }
      })

      it('keeps them on a redeemed code, and sid and authTime on the family it starts', async () => {
        const code = codeRecord({ ...oidc })
        await store.codes.saveCode(code)
        const family = refreshFamily({ sid: oidc.sid, authTime: oidc.authTime })
        const rt = sha256('rt-oidc')
        expect(
          await store.codes.redeemCode('acme', code.codeHash, t0 + minute, {
            family,
            tokenHash: rt,
          }),
        ).toBe(true)
        expect(await store.codes.findCode('acme', code.codeHash)).toStrictEqual({
          ...code,
          consumedAt: t0 + minute,
        })
        expect(await store.refreshTokens.findFamily('acme', family.familyId)).toStrictEqual(family)
        expect(await store.refreshTokens.findRefreshToken('acme', rt)).toStrictEqual({
          token: { tokenHash: rt, familyId: family.familyId, createdAt: t0 + minute },
          family,
        })
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', rt, sha256('rt-2'), t0 + hour),
        ).toStrictEqual({ status: 'rotated', family })
        expect(
          await store.refreshTokens.rotateRefreshToken('acme', rt, sha256('rt-3'), t0 + 2 * hour),
        ).toStrictEqual({ status: 'reused', family: { ...family, revokedAt: t0 + 2 * hour } })
        expect(
          await store.refreshTokens.rotateRefreshToken(
            'acme',
            sha256('rt-2'),
            sha256('rt-4'),
            t0 + 3 * hour,
          ),
        ).toStrictEqual({ status: 'inactive', family: { ...family, revokedAt: t0 + 2 * hour } })
      })

      it('leaves sid and authTime out of a family created without them', async () => {
        await startFamily(store, refreshFamily(), sha256('rt-1'))
        const found = await store.refreshTokens.findFamily('acme', 'family-1')
        expect(found).toStrictEqual(refreshFamily())
        expect(found).not.toHaveProperty('sid')
        expect(found).not.toHaveProperty('authTime')
      })

      it('refuses a nonce or sid that is not well-formed text, or an authTime that is not an integer', async () => {
        for (const fields of [
          { nonce: 'x\ud800' },
          { sid: 7 as unknown as string },
          { authTime: t0 + 0.5 },
        ]) {
          await expect(store.codes.saveCode(codeRecord(fields))).rejects.toThrow(TypeError)
        }
        expect(await store.codes.findCode('acme', codeRecord().codeHash)).toBeUndefined()
        await store.codes.saveCode(codeRecord())
        for (const fields of [{ sid: 'x\udc00' }, { authTime: Number.NaN }]) {
          await expect(
            store.codes.redeemCode('acme', codeRecord().codeHash, t0, {
              family: refreshFamily(fields),
            }),
          ).rejects.toThrow(TypeError)
        }
        expect(await store.codes.findCode('acme', codeRecord().codeHash)).not.toHaveProperty(
          'consumedAt',
        )
      })
    })

    describe('sessions', () => {
      it('creates a session and finds it by (tenant, idHash) with every field intact', async () => {
        const session = sessionRecord()
        await store.sessions.createSession(session)
        expect(await store.sessions.findSession('acme', session.idHash)).toStrictEqual(session)
        expect(await store.sessions.findSession('acme', sha256('session-2'))).toBeUndefined()
        expect(await store.sessions.findSession('globex', session.idHash)).toBeUndefined()
        const found = await store.sessions.findSession('acme', session.idHash)
        expect(found).not.toHaveProperty('endedAt')
        // Copies: changing what was given or found changes nothing stored.
        session.claims.email = 'mallory@example.com'
        if (found) (found.claims.roles as string[]).push('root')
        expect((await store.sessions.findSession('acme', session.idHash))?.claims).toStrictEqual(
          sessionRecord().claims,
        )
      })

      it('keeps the sessions of two tenants apart, with the same idHash', async () => {
        await store.sessions.createSession(sessionRecord())
        await store.sessions.createSession(sessionRecord({ tenant: 'globex', sub: 'bob' }))
        expect((await store.sessions.findSession('globex', sha256('session-1')))?.sub).toBe('bob')
        expect(await store.sessions.endSession('globex', 'sid-1', t0 + minute)).toBe(true)
        expect(await store.sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
          sessionRecord(),
        )
      })

      it('refuses a second session with one idHash with ERR_STORE_CONFLICT, changing nothing', async () => {
        const old = sessionRecord({ idHash: sha256('old') })
        await store.sessions.createSession(old)
        await store.sessions.createSession(sessionRecord())
        const error = await storeError(
          store.sessions.createSession(
            sessionRecord({ sub: 'mallory', createdAt: t0 + minute }),
            old.idHash,
          ),
        )
        expect(error.code).toBe('ERR_STORE_CONFLICT')
        expect(error.message).not.toContain(sha256('session-1'))
        expect(await store.sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
          sessionRecord(),
        )
        // The session it named as replaced is left live: all or nothing.
        expect(await store.sessions.findSession('acme', old.idHash)).toStrictEqual(old)
      })

      it('ends the session it replaces at the new one’s createdAt, in the same call', async () => {
        const first = sessionRecord({ idHash: sha256('first') })
        await store.sessions.createSession(first)
        const second = sessionRecord({ idHash: sha256('second'), createdAt: t0 + hour })
        await store.sessions.createSession(second, first.idHash)
        expect(await store.sessions.findSession('acme', first.idHash)).toStrictEqual({
          ...first,
          endedAt: t0 + hour,
        })
        expect(await store.sessions.findSession('acme', second.idHash)).toStrictEqual(second)
        // An ended session keeps the time it first ended.
        const third = sessionRecord({ idHash: sha256('third'), createdAt: t0 + 2 * hour })
        await store.sessions.createSession(third, first.idHash)
        expect((await store.sessions.findSession('acme', first.idHash))?.endedAt).toBe(t0 + hour)
        // Replacing an unknown session, or one of another tenant, ends nothing.
        await store.sessions.createSession(sessionRecord({ tenant: 'globex' }))
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('fourth'), createdAt: t0 + 3 * hour }),
          sha256('session-1'),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('fifth'), createdAt: t0 + 3 * hour }),
          sha256('no-such-session'),
        )
        expect(await store.sessions.findSession('globex', sha256('session-1'))).not.toHaveProperty(
          'endedAt',
        )
        expect(await store.sessions.findSession('acme', second.idHash)).toStrictEqual(second)
      })

      it('ends every session of the sid, consumes its codes and revokes its families', async () => {
        const sid = 'sid-1'
        const other = 'sid-2'
        await store.sessions.createSession(sessionRecord({ idHash: sha256('a'), sid }))
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('b'), sid, createdAt: t0 + minute }),
        )
        await store.sessions.createSession(sessionRecord({ idHash: sha256('c'), sid: other }))
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('d'), sid, endedAt: t0 + minute }),
        )
        await store.sessions.createSession(sessionRecord({ tenant: 'globex', sid }))
        // Codes: one live, one redeemed, one expired, one of another sid, one without a sid.
        const live = codeRecord({ codeHash: sha256('live'), sid })
        const redeemed = codeRecord({ codeHash: sha256('redeemed'), sid })
        const expired = codeRecord({ codeHash: sha256('expired'), sid, expiresAt: t0 + minute })
        const otherCode = codeRecord({ codeHash: sha256('other'), sid: other })
        const plain = codeRecord({ codeHash: sha256('plain') })
        const globexCode = codeRecord({ tenant: 'globex', codeHash: sha256('live'), sid })
        for (const code of [live, redeemed, expired, otherCode, plain, globexCode]) {
          await store.codes.saveCode(code)
        }
        const family = refreshFamily({ codeHash: redeemed.codeHash, sid, authTime: t0 })
        await store.codes.redeemCode('acme', redeemed.codeHash, t0 + minute, {
          family,
          tokenHash: sha256('rt-1'),
        })
        await startFamily(store, refreshFamily({ familyId: 'revoked', sid }), sha256('rt-r'))
        await store.refreshTokens.revokeFamily('acme', 'revoked', t0 + minute)
        await startFamily(store, refreshFamily({ familyId: 'other', sid: other }), sha256('rt-o'))
        await startFamily(store, refreshFamily({ familyId: 'plain' }), sha256('rt-p'))
        await startFamily(
          store,
          refreshFamily({ tenant: 'globex', familyId: 'globex', sid }),
          sha256('rt-g'),
        )

        const now = t0 + 2 * hour
        expect(await store.sessions.endSession('acme', sid, now)).toBe(true)

        const session = (tenant: string, name: string): Promise<SessionRecord | undefined> =>
          store.sessions.findSession(tenant, sha256(name))
        expect((await session('acme', 'a'))?.endedAt).toBe(now)
        expect((await session('acme', 'b'))?.endedAt).toBe(now)
        expect((await session('acme', 'd'))?.endedAt).toBe(t0 + minute)
        expect(await session('acme', 'c')).not.toHaveProperty('endedAt')
        expect(await session('globex', 'session-1')).not.toHaveProperty('endedAt')

        const consumedAt = async (tenant: string, code: AuthorizationCodeRecord) =>
          (await store.codes.findCode(tenant, code.codeHash))?.consumedAt
        expect(await consumedAt('acme', live)).toBe(now)
        expect(await consumedAt('acme', redeemed)).toBe(t0 + minute)
        expect(await consumedAt('acme', expired)).toBe(now)
        expect(await consumedAt('acme', otherCode)).toBeUndefined()
        expect(await consumedAt('acme', plain)).toBeUndefined()
        expect(await consumedAt('globex', globexCode)).toBeUndefined()
        // A code of the sid cannot start a family afterwards.
        expect(
          await store.codes.redeemCode('acme', live.codeHash, now, {
            family: refreshFamily({ familyId: 'late', sid }),
          }),
        ).toBe(false)
        expect(await store.refreshTokens.findFamily('acme', 'late')).toBeUndefined()

        const revokedAt = async (tenant: string, familyId: string) =>
          (await store.refreshTokens.findFamily(tenant, familyId))?.revokedAt
        expect(await revokedAt('acme', family.familyId)).toBe(now)
        expect(await revokedAt('acme', 'revoked')).toBe(t0 + minute)
        expect(await revokedAt('acme', 'other')).toBeUndefined()
        expect(await revokedAt('acme', 'plain')).toBeUndefined()
        expect(await revokedAt('globex', 'globex')).toBeUndefined()
        expect(
          (await store.refreshTokens.rotateRefreshToken('acme', sha256('rt-1'), sha256('n'), now))
            .status,
        ).toBe('inactive')
      })

      it('answers whether a session live at now was ended', async () => {
        const expiresAt = t0 + hour
        await store.sessions.createSession(sessionRecord({ sid: 'live', expiresAt }))
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('expired'), sid: 'expired', expiresAt }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('ended'), sid: 'ended', endedAt: t0 + minute }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('old'), sid: 'mixed', expiresAt }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('new'), sid: 'mixed', expiresAt: expiresAt + 1 }),
        )
        // Live up to the millisecond before it expires.
        expect(await store.sessions.endSession('acme', 'live', expiresAt - 1)).toBe(true)
        expect(await store.sessions.endSession('acme', 'live', expiresAt - 1)).toBe(false)
        // An expired session is ended all the same, but was not live.
        expect(await store.sessions.endSession('acme', 'expired', expiresAt)).toBe(false)
        expect((await store.sessions.findSession('acme', sha256('expired')))?.endedAt).toBe(
          expiresAt,
        )
        expect(await store.sessions.endSession('acme', 'ended', t0 + hour)).toBe(false)
        expect((await store.sessions.findSession('acme', sha256('ended')))?.endedAt).toBe(
          t0 + minute,
        )
        expect(await store.sessions.endSession('acme', 'unknown', t0)).toBe(false)
        expect(await store.sessions.endSession('globex', 'live', t0)).toBe(false)
        // One live session among expired ones is enough.
        expect(await store.sessions.endSession('acme', 'mixed', expiresAt)).toBe(true)
      })

      it('never leaves a live family of a sid whose logout raced its code’s redemption', async () => {
        await raceLogoutAndRedemption(store, store, 20)
      })

      it('throws a TypeError for a malformed session or argument, storing nothing', async () => {
        for (const [fields, replaces] of [
          [{ idHash: 'x\ud800' }, undefined],
          [{ sid: 1 as unknown as string }, undefined],
          [{ claims: [] as unknown as Record<string, unknown> }, undefined],
          [{ authTime: Number.NaN }, undefined],
          [{ expiresAt: t0 + 0.5 }, undefined],
          [{ endedAt: Number.POSITIVE_INFINITY }, undefined],
          [{}, 'x\udc00'],
        ] as const) {
          await expect(
            store.sessions.createSession(sessionRecord(fields), replaces),
          ).rejects.toThrow(TypeError)
        }
        expect(await store.sessions.findSession('acme', sha256('session-1'))).toBeUndefined()
        await store.sessions.createSession(sessionRecord())
        await expect(store.sessions.endSession('acme', 'sid-1', t0 + 0.5)).rejects.toThrow(
          TypeError,
        )
        await expect(store.sessions.endSession('acme', 'x\ud800', t0)).rejects.toThrow(TypeError)
        expect(await store.sessions.findSession('acme', sha256('session-1'))).toStrictEqual(
          sessionRecord(),
        )
      })

      it('is purged once expired or ended, and counted', async () => {
        const now = t0 + day
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('expired'), expiresAt: now }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('live'), expiresAt: now + 1 }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('ended'), expiresAt: now + day, endedAt: now }),
        )
        await store.sessions.createSession(
          sessionRecord({ idHash: sha256('ends-later'), expiresAt: now + day, endedAt: now + 1 }),
        )
        expect(await store.expiry.purgeExpired(now)).toBe(2)
        expect(await store.expiry.purgeExpired(now)).toBe(0)
        expect(await store.sessions.findSession('acme', sha256('expired'))).toBeUndefined()
        expect(await store.sessions.findSession('acme', sha256('ended'))).toBeUndefined()
        expect(await store.sessions.findSession('acme', sha256('live'))).toBeDefined()
        expect(await store.sessions.findSession('acme', sha256('ends-later'))).toBeDefined()
      })
    })

    describe('purgeExpired', () => {
      it('deletes what can no longer matter, counts it, and leaves the rest', async () => {
        const now = t0 + 2 * day
        const windowMs = 15 * minute
        // Codes are kept an hour past expiry, so that a late replay is still seen as one.
        const purgedCode = codeRecord({ codeHash: sha256('old'), expiresAt: now - hour })
        const keptCode = codeRecord({ codeHash: sha256('late'), expiresAt: now - hour + 1 })
        await store.codes.saveCode(purgedCode)
        await store.codes.saveCode(keptCode)
        // startFamily saves codes of its own, live until t0 + 1 day: purged too.
        await startFamily(store, refreshFamily({ familyId: 'old', expiresAt: now }), sha256('o1'))
        await store.refreshTokens.rotateRefreshToken('acme', sha256('o1'), sha256('o2'), t0)
        await startFamily(
          store,
          refreshFamily({ familyId: 'live', expiresAt: now + 1 }),
          sha256('l1'),
        )
        await failOne(store, 'acme:old', { limit: 5, now: now - windowMs, windowMs })
        await failOne(store, 'acme:live', { limit: 5, now: now - windowMs + 1, windowMs })
        // A hold never settled, whose lease runs out at `now`.
        await reserveOne(store, 'acme:stuck', { limit: 5, now: now - hour })

        // 3 codes, 2 tokens, 1 family, 1 window, 1 hold.
        expect(await store.expiry.purgeExpired(now)).toBe(8)
        expect(await store.expiry.purgeExpired(now)).toBe(0)

        expect(await store.codes.findCode('acme', purgedCode.codeHash)).toBeUndefined()
        expect(await store.codes.findCode('acme', keptCode.codeHash)).toStrictEqual(keptCode)
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('o1'))).toBeUndefined()
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('o2'))).toBeUndefined()
        expect(await store.refreshTokens.findRefreshToken('acme', sha256('l1'))).toMatchObject({
          family: { familyId: 'live' },
        })
        expect(await attemptsHeld(store, 'acme:old', now - 1)).toBe(0)
        expect(await failuresOf(store, 'acme:live', now)).toBe(1)
      })

      it('deletes nothing from an empty store', async () => {
        expect(await store.expiry.purgeExpired(t0)).toBe(0)
      })
    })

    describe('marks', () => {
      const until = t0 + 10 * minute

      it('sets a mark once: true, then false while it lasts', async () => {
        expect(await store.marks.isMarked('acme', 'login-form', 'form-1', t0)).toBe(false)
        expect(await store.marks.mark('acme', 'login-form', 'form-1', until, t0)).toBe(true)
        expect(await store.marks.mark('acme', 'login-form', 'form-1', until, t0 + 1)).toBe(false)
        expect(await store.marks.isMarked('acme', 'login-form', 'form-1', t0)).toBe(true)
        expect(await store.marks.isMarked('acme', 'login-form', 'form-1', until - 1)).toBe(true)
      })

      it('counts a mark as unset from its expiresAt on, and sets it again then', async () => {
        await store.marks.mark('acme', 'jti', 'j-1', until, t0)
        expect(await store.marks.isMarked('acme', 'jti', 'j-1', until)).toBe(false)
        expect(await store.marks.mark('acme', 'jti', 'j-1', until + hour, until)).toBe(true)
        expect(await store.marks.isMarked('acme', 'jti', 'j-1', until + hour - 1)).toBe(true)
        expect(await store.marks.mark('acme', 'jti', 'j-1', until + day, until + 1)).toBe(false)
        expect(await store.marks.isMarked('acme', 'jti', 'j-1', until + hour)).toBe(false)
      })

      it('keeps the first expiry when a live mark is set again', async () => {
        await store.marks.mark('acme', 'revoked', 'j-1', until, t0)
        expect(await store.marks.mark('acme', 'revoked', 'j-1', until + day, t0 + 1)).toBe(false)
        expect(await store.marks.isMarked('acme', 'revoked', 'j-1', until)).toBe(false)
      })

      it('keeps tenants and kinds apart', async () => {
        expect(await store.marks.mark('acme', 'jti', 'x', until, t0)).toBe(true)
        expect(await store.marks.isMarked('globex', 'jti', 'x', t0)).toBe(false)
        expect(await store.marks.isMarked('acme', 'revoked', 'x', t0)).toBe(false)
        expect(await store.marks.mark('globex', 'jti', 'x', until, t0)).toBe(true)
        expect(await store.marks.mark('acme', 'revoked', 'x', until, t0)).toBe(true)
        expect(await store.marks.mark('acme', 'jti', 'x', until, t0)).toBe(false)
      })

      it('keeps ids byte for byte, NUL and case included', async () => {
        const ids = [
          'a',
          'a\u0000',
          'a\u0000b',
          'A',
          'e\u0301',
          '\u00e9',
          '\u{1F600}',
          ' a',
          'x'.repeat(512),
        ]
        for (const id of ids)
          expect(await store.marks.mark('acme', 'jti', id, until, t0)).toBe(true)
        for (const id of ids) expect(await store.marks.isMarked('acme', 'jti', id, t0)).toBe(true)
        for (const id of ids)
          expect(await store.marks.mark('acme', 'jti', id, until, t0)).toBe(false)
        expect(await store.marks.isMarked('acme', 'jti', 'a\u0000c', t0)).toBe(false)
      })

      it('answers true to exactly one of 20 concurrent marks of one id', async () => {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => store.marks.mark('acme', 'jti', 'race', until, t0)),
        )
        expect(answers.filter(Boolean)).toHaveLength(1)
      })

      it('answers true to exactly one of 20 concurrent marks of an expired one', async () => {
        await store.marks.mark('acme', 'jti', 'race', until, t0)
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.marks.mark('acme', 'jti', 'race', until + day, until + i),
          ),
        )
        expect(answers.filter(Boolean)).toHaveLength(1)
      })

      it.each([
        ['an empty kind', '', 'id', until, t0],
        ['a kind of 33 characters', 'k'.repeat(33), 'id', until, t0],
        ['a kind with U+0000', 'j\u0000ti', 'id', until, t0],
        ['an empty id', 'jti', '', until, t0],
        ['an id of 513 characters', 'jti', 'x'.repeat(513), until, t0],
        ['an id with a lone surrogate', 'jti', 'x\ud800', until, t0],
        ['a NaN now', 'jti', 'id', until, Number.NaN],
      ])('refuses %s with a TypeError, setting nothing', async (_, kind, id, expiresAt, now) => {
        await expect(store.marks.mark('acme', kind, id, expiresAt, now)).rejects.toThrow(TypeError)
        await expect(store.marks.isMarked('acme', kind, id, now)).rejects.toThrow(TypeError)
        expect(await store.marks.mark('acme', 'jti', 'id', until, t0)).toBe(true)
      })

      it('refuses an expiresAt that is not integer epoch milliseconds, setting nothing', async () => {
        for (const expiresAt of [until + 0.5, Number.POSITIVE_INFINITY, Number.NaN]) {
          await expect(store.marks.mark('acme', 'jti', 'id', expiresAt, t0)).rejects.toThrow(
            TypeError,
          )
        }
        expect(await store.marks.isMarked('acme', 'jti', 'id', t0)).toBe(false)
      })

      it('is purged once expired, and counted', async () => {
        await store.marks.mark('acme', 'jti', 'old', until, t0)
        await store.marks.mark('acme', 'jti', 'live', until + 1, t0)
        expect(await store.expiry.purgeExpired(until)).toBe(1)
        expect(await store.expiry.purgeExpired(until)).toBe(0)
        expect(await store.marks.isMarked('acme', 'jti', 'live', until)).toBe(true)
        expect(await store.marks.mark('acme', 'jti', 'old', until + day, until)).toBe(true)
      })

      it('refuses any use after close', async () => {
        await store.close()
        for (const use of [
          () => store.marks.mark('acme', 'jti', 'x', until, t0),
          () => store.marks.isMarked('acme', 'jti', 'x', t0),
          () => store.secrets.getOrCreateSecret('login-form-key', 'candidate'),
        ]) {
          expect((await storeError(use())).code).toBe('ERR_STORE_CLOSED')
        }
      })
    })

    describe('secrets', () => {
      it('stores the first candidate and answers it to every later caller', async () => {
        expect(await store.secrets.getOrCreateSecret('login-form-key', 'first')).toBe('first')
        expect(await store.secrets.getOrCreateSecret('login-form-key', 'second')).toBe('first')
        expect(await store.secrets.getOrCreateSecret('other-key', 'second')).toBe('second')
        expect(await store.secrets.getOrCreateSecret('login-form-key', 'third')).toBe('first')
      })

      it('answers one value to 20 concurrent callers with different candidates', async () => {
        const values = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.secrets.getOrCreateSecret('login-form-key', `candidate-${i}`),
          ),
        )
        expect(new Set(values).size).toBe(1)
        expect(values[0]).toMatch(/^candidate-\d+$/)
      })

      it.each([
        ['an empty name', '', 'value'],
        ['an empty candidate', 'name', ''],
        ['a NUL in the name', 'a\u0000b', 'value'],
        ['a NUL in the candidate', 'name', 'a\u0000b'],
        ['a lone surrogate', 'name', 'x\udc00'],
      ])('refuses %s with a TypeError, storing nothing', async (_, name, candidate) => {
        await expect(store.secrets.getOrCreateSecret(name, candidate)).rejects.toThrow(TypeError)
        expect(await store.secrets.getOrCreateSecret('name', 'kept')).toBe('kept')
      })
    })

    describe('parsedConfig', () => {
      /** The key of the `i`th tenant file: a SHA-256 digest, as the issuer computes them. */
      const fileKey = (i: number): string => sha256(`tenant-file-${i}`)
      /** `count` entries from the `from`th file on; values of about 1 KB, like sealed results. */
      const entries = (count: number, from = 0, tag = 'sealed'): ParsedConfigEntry[] =>
        Array.from({ length: count }, (_, i) => ({
          key: fileKey(from + i),
          value: `${tag}-${from + i}:${'x'.repeat(1000)}`,
        }))
      const byKey = (list: readonly ParsedConfigEntry[]): ParsedConfigEntry[] =>
        [...list].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))

      it('lists what was added; an existing key takes the new value and stamp', async () => {
        expect(await store.parsedConfig.list()).toEqual([])
        expect(await store.parsedConfig.add([], t0)).toBe(0)
        const first = entries(3)
        expect(await store.parsedConfig.add(first, t0)).toBe(3)
        expect(byKey(await store.parsedConfig.list())).toEqual(byKey(first))
        const again = [{ key: fileKey(1), value: 'other' }, ...entries(1, 3)]
        expect(await store.parsedConfig.add(again, t0 + hour)).toBe(2)
        const [zero, , two, three] = entries(4)
        expect(byKey(await store.parsedConfig.list())).toEqual(
          byKey([zero, { key: fileKey(1), value: 'other' }, two, three].flatMap((e) => e ?? [])),
        )
        // Replaced at t0 + hour: a prune of what is older than that leaves it.
        expect(await store.parsedConfig.prune(new Set(), t0 + hour)).toBe(2)
        expect(byKey(await store.parsedConfig.list())).toEqual(
          byKey([{ key: fileKey(1), value: 'other' }, three].flatMap((e) => e ?? [])),
        )
      })

      it('keeps the first entry of a key given twice in one call', async () => {
        const key = fileKey(0)
        const twice = [
          { key, value: 'first' },
          { key, value: 'second' },
        ]
        expect(await store.parsedConfig.add(twice, t0)).toBe(1)
        expect(await store.parsedConfig.list()).toEqual([{ key, value: 'first' }])
      })

      it('stores any text up to 1 MiB as it was given', async () => {
        const values = ['', 'é ☃ 𝄞 \t\n', 'z'.repeat(1_048_576)]
        const added = values.map((value, i) => ({ key: fileKey(i), value }))
        expect(await store.parsedConfig.add(added, t0)).toBe(3)
        expect(byKey(await store.parsedConfig.list())).toEqual(byKey(added))
      })

      it('adds 10,000 entries in one call and lists them', async () => {
        const many = entries(10_000)
        const started = performance.now()
        expect(await store.parsedConfig.add(many, t0)).toBe(10_000)
        const listed = await store.parsedConfig.list()
        // One transaction: seconds would mean a commit per entry.
        expect(performance.now() - started).toBeLessThan(10_000)
        expect(listed).toHaveLength(10_000)
        expect(byKey(listed)).toEqual(byKey(many))
        expect(await store.parsedConfig.add(many, t0 + 1)).toBe(10_000)
        expect(await store.parsedConfig.list()).toHaveLength(10_000)
      })

      it('prunes only the entries stamped before `before` and not kept, and counts them', async () => {
        // 0-99 stamped at t0, 100-199 at t0 + hour.
        await store.parsedConfig.add(entries(100), t0)
        await store.parsedConfig.add(entries(100, 100), t0 + hour)
        // 20,000 keys to keep: the even files among the old ones, and keys of files never added.
        const keep = new Set<string>()
        for (let i = 0; i < 100; i += 2) keep.add(fileKey(i))
        for (let i = 1_000_000; keep.size < 20_000; i++) keep.add(fileKey(i))
        // Stamped at `before` exactly is not before it.
        expect(await store.parsedConfig.prune(keep, t0)).toBe(0)
        expect(await store.parsedConfig.prune(keep, t0 + hour)).toBe(50)
        expect(await store.parsedConfig.prune(keep, t0 + hour)).toBe(0)
        const left = (await store.parsedConfig.list()).map(({ key }) => key).sort()
        const expected = [
          ...Array.from({ length: 50 }, (_, i) => fileKey(2 * i)),
          ...Array.from({ length: 100 }, (_, i) => fileKey(100 + i)),
        ].sort()
        expect(left).toEqual(expected)
        // Nothing kept: everything before the bound goes.
        expect(await store.parsedConfig.prune(new Set(), t0 + hour + 1)).toBe(150)
        expect(await store.parsedConfig.list()).toEqual([])
      })

      const valid = entries(2)
      it.each<[string, readonly unknown[], number]>([
        ['a key in upper case', [...valid, { key: fileKey(9).toUpperCase(), value: 'v' }], t0],
        ['a key of 63 characters', [...valid, { key: fileKey(9).slice(1), value: 'v' }], t0],
        ['a key that is not hex', [...valid, { key: 'g'.repeat(64), value: 'v' }], t0],
        ['a key that is not a string', [...valid, { key: 42, value: 'v' }], t0],
        ['a value over 1 MiB', [...valid, { key: fileKey(9), value: 'z'.repeat(1_048_577) }], t0],
        ['a value that is not a string', [...valid, { key: fileKey(9), value: { a: 1 } }], t0],
        ['a value with U+0000', [...valid, { key: fileKey(9), value: 'a\u0000b' }], t0],
        ['a value with a lone surrogate', [...valid, { key: fileKey(9), value: 'x\udc00' }], t0],
        ['an entry that is null', [...valid, null], t0],
        ['a negative now', valid, -1],
        ['a fractional now', valid, t0 + 0.5],
        ['a now of NaN', valid, Number.NaN],
        ['a now of Infinity', valid, Number.POSITIVE_INFINITY],
      ])('refuses %s with a TypeError, storing nothing of the call', async (_, asked, now) => {
        await expect(store.parsedConfig.add(asked as ParsedConfigEntry[], now)).rejects.toThrow(
          TypeError,
        )
        expect(await store.parsedConfig.list()).toEqual([])
      })

      it('refuses a bad before or key to keep with a TypeError, deleting nothing', async () => {
        await store.parsedConfig.add(valid, t0)
        for (const [keep, before] of [
          [new Set<string>(), -1],
          [new Set<string>(), 1.5],
          [new Set<string>(), Number.NaN],
          [new Set(['not-a-digest']), t0 + 1],
          [new Set([fileKey(0).toUpperCase()]), t0 + 1],
          [[fileKey(0)] as unknown as Set<string>, t0 + 1],
        ] as const) {
          await expect(store.parsedConfig.prune(keep, before)).rejects.toThrow(TypeError)
        }
        expect(byKey(await store.parsedConfig.list())).toEqual(byKey(valid))
      })

      it('stores one value per key when two calls add the same keys at once', async () => {
        const ours = entries(500, 0, 'ours')
        // The other call in the reverse order: adapters must not deadlock on it.
        const theirs = entries(500, 0, 'theirs').reverse()
        const counts = await Promise.all([
          store.parsedConfig.add(ours, t0),
          store.parsedConfig.add(theirs, t0),
        ])
        expect(counts).toEqual([500, 500])
        const listed = await store.parsedConfig.list()
        expect(new Set(listed.map(({ key }) => key)).size).toBe(500)
        const offered = new Set([...ours, ...theirs].map(({ key, value }) => `${key}=${value}`))
        for (const { key, value } of listed) expect(offered).toContain(`${key}=${value}`)
      })
    })

    describe('lifecycle', () => {
      it('answers ping while open and refuses any use after close', async () => {
        await expect(store.ping()).resolves.toBeUndefined()
        await store.close()
        await store.close()
        for (const use of [
          () => store.ping(),
          () => store.keys.listKeys('acme'),
          () => store.keys.retireKey('acme', '2025-03-10', t0),
          () => store.keys.updatePrivateKey('acme', '2025-03-10', 'a', 'b'),
          () => store.keys.deleteKey('acme', '2025-03-10'),
          () => store.keys.listPrunedKids('acme'),
          () =>
            store.throttle.reserveAttempts([{ key: 'acme:alice', limit: 1 }], {
              now: t0,
              leaseMs: 1,
            }),
          () =>
            store.throttle.settleAttempts(
              { hold: 'h', fail: [], clear: ['acme:alice'] },
              { now: t0, windowMs: 1 },
            ),
          () => store.codes.saveCode(codeRecord()),
          () => store.codes.findCode('acme', sha256('code-1')),
          () => store.codes.redeemCode('acme', sha256('code-1'), t0, undefined),
          () => store.refreshTokens.findRefreshToken('acme', sha256('rt-1')),
          () => store.refreshTokens.rotateRefreshToken('acme', sha256('a'), sha256('b'), t0),
          () => store.refreshTokens.revokeFamily('acme', 'family-1', t0),
          () => store.refreshTokens.revokeFamiliesByCode('acme', sha256('code-1'), t0),
          () => store.expiry.purgeExpired(t0),
          () => store.sessions.createSession(sessionRecord()),
          () => store.sessions.findSession('acme', sha256('session-1')),
          () => store.sessions.endSession('acme', 'sid-1', t0),
          () => store.parsedConfig.list(),
          () => store.parsedConfig.add([{ key: sha256('file'), value: 'v' }], t0),
          () => store.parsedConfig.prune(new Set(), t0),
        ]) {
          const error: unknown = await use().catch((e: unknown) => e)
          expect(error).toBeInstanceOf(StoreError)
          expect(error).toMatchObject({ code: 'ERR_STORE_CLOSED' })
        }
      })
    })
  })
}
