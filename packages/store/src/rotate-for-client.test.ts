import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryStore } from './memory.js'
import { openSqliteStore } from './sqlite.js'
import type { Store } from './store.js'
import {
  runStoreContract,
  refreshFamily,
  sha256,
  startFamily,
  t0,
} from './test-utils/contract/index.js'

let dir: string
let files = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-rotate-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const adapters: [string, () => Promise<Store>][] = [
  ['memory', () => Promise.resolve(createMemoryStore())],
  ['sqlite (file)', () => openSqliteStore(join(dir, `store-${++files}.db`))],
  ['sqlite (:memory:)', () => openSqliteStore(':memory:')],
]

/** The client of every family the contract suite creates. */
const CONTRACT_CLIENT = 'web'

/**
 * The store with `rotateRefreshToken` answered by `rotateRefreshTokenForClient` for the client
 * the token was issued to: the contract's rotation tests then hold the new method to exactly
 * the rules of the old one.
 */
async function throughForClient(open: () => Promise<Store>): Promise<Store> {
  const store = await open()
  const refresh = store.refreshTokens
  if (refresh.rotateRefreshTokenForClient === undefined) throw new Error('adapter lacks it')
  return {
    ...store,
    refreshTokens: {
      ...refresh,
      rotateRefreshToken: (tenant, oldHash, newHash, now) =>
        forClient(refresh)(tenant, CONTRACT_CLIENT, oldHash, newHash, now),
    },
  }
}

/** The adapter's rotateRefreshTokenForClient, which every adapter of this package has. */
function forClient(
  refresh: Store['refreshTokens'],
): NonNullable<Store['refreshTokens']['rotateRefreshTokenForClient']> {
  return (...args) => {
    if (refresh.rotateRefreshTokenForClient === undefined) throw new Error('adapter lacks it')
    return refresh.rotateRefreshTokenForClient(...args)
  }
}

for (const [name, open] of adapters) {
  runStoreContract(`${name}, rotating with rotateRefreshTokenForClient,`, () =>
    throughForClient(open),
  )

  describe(`${name} store: rotateRefreshTokenForClient`, () => {
    let store: Store
    const hour = 3_600_000
    const family = refreshFamily()
    const first = sha256('rt-1')
    const second = sha256('rt-2')

    beforeEach(async () => {
      store = await open()
      await startFamily(store, family, first)
    })

    afterEach(async () => {
      await store.close()
    })

    const rotate = (clientId: string, oldHash: string, newHash: string, now: number) =>
      forClient(store.refreshTokens)(family.tenant, clientId, oldHash, newHash, now)

    it('rotates a token of the client, as rotateRefreshToken does', async () => {
      expect(await rotate(family.clientId, first, second, t0 + hour)).toStrictEqual({
        status: 'rotated',
        family,
      })
      expect(await store.refreshTokens.findRefreshToken('acme', first)).toMatchObject({
        token: { spentAt: t0 + hour },
      })
      expect(await store.refreshTokens.findRefreshToken('acme', second)).toMatchObject({
        token: { tokenHash: second, createdAt: t0 + hour },
        family,
      })
    })

    it('answers not_found for a live token of another client and changes nothing', async () => {
      expect(await rotate('other-client', first, second, t0 + hour)).toEqual({
        status: 'not_found',
      })
      const found = await store.refreshTokens.findRefreshToken('acme', first)
      expect(found?.token).not.toHaveProperty('spentAt')
      expect(found?.family).not.toHaveProperty('revokedAt')
      expect(await store.refreshTokens.findRefreshToken('acme', second)).toBeUndefined()
    })

    it('answers not_found for a spent token of another client, without revoking the family', async () => {
      await rotate(family.clientId, first, second, t0 + hour)
      expect(await rotate('other-client', first, sha256('rt-x'), t0 + 2 * hour)).toEqual({
        status: 'not_found',
      })
      const found = await store.refreshTokens.findRefreshToken('acme', second)
      expect(found?.family).not.toHaveProperty('revokedAt')
      expect(found?.token).not.toHaveProperty('spentAt')
    })

    it('answers not_found for a token of another tenant', async () => {
      const method = forClient(store.refreshTokens)
      expect(await method('globex', family.clientId, first, second, t0 + hour)).toEqual({
        status: 'not_found',
      })
    })

    it('refuses a time that is not integer epoch milliseconds, or a malformed new hash', async () => {
      await expect(rotate(family.clientId, first, second, t0 + 0.5)).rejects.toBeInstanceOf(
        TypeError,
      )
      await expect(rotate(family.clientId, first, '\ud800', t0)).rejects.toBeInstanceOf(TypeError)
      expect((await store.refreshTokens.findRefreshToken('acme', first))?.token).not.toHaveProperty(
        'spentAt',
      )
    })
  })
}
