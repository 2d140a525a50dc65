import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { raceProcesses } from '../race.js'
import { attemptsHeld } from './attempts.js'
import { codeRecord, refreshFamily, startFamily, t0 } from './fixtures.js'
import type { SharedDatabase } from './shared-database.js'

const REPLICA = fileURLToPath(new URL('../replica.mjs', import.meta.url))
const BUILT = fileURLToPath(new URL('../../../dist/index.js', import.meta.url))

type Mode =
  'redeem' | 'rotate' | 'rotate-for-client' | 'key' | 'mark' | 'secret' | 'reserve' | 'register'

/**
 * Separate Node processes on one database: real replicas, so only the database can keep two of
 * them from both winning. The processes run the built package (turbo builds before it tests):
 * rebuild after changing src/ before running an adapter's file on its own.
 */
export function processesContract(database: SharedDatabase): void {
  describe('separate processes on one database', () => {
    const rounds = 40
    const replicas = 4
    let url: string

    beforeAll(() => {
      if (!existsSync(BUILT)) throw new Error('build @tessera/store first (tsc -b)')
    })

    /** Starts the replicas on the database, releases them together, and collects. */
    async function race<T>(mode: Mode): Promise<T[][]> {
      return raceProcesses<T>(replicas, (worker) => [
        REPLICA,
        url,
        mode,
        String(rounds),
        String(worker),
      ])
    }

    const count = (from: string): Promise<number> => database.count(url, from)

    it('lets exactly one process redeem each code and create its family', async () => {
      url = await database.fresh()
      const store = await database.open(url)
      for (let i = 0; i < rounds; i++) {
        await store.codes.saveCode(codeRecord({ codeHash: `code-${i}`, expiresAt: t0 + 60_000 }))
      }
      const results = await race<boolean>('redeem')
      for (let i = 0; i < rounds; i++) {
        expect(results.filter((r) => r[i] === true)).toHaveLength(1)
      }
      // One family per code, and its one token.
      expect(await count('refresh_families')).toBe(rounds)
      expect(await count('(SELECT DISTINCT code_hash FROM refresh_families) AS codes')).toBe(rounds)
      expect(await count('refresh_tokens')).toBe(rounds)
    })

    it('lets exactly one process rotate each token; the others revoke its family', async () => {
      url = await database.fresh()
      const store = await database.open(url)
      for (let i = 0; i < rounds; i++) {
        await startFamily(store, refreshFamily({ familyId: `family-${i}` }), `rt-${i}`)
      }
      const results = await race<string>('rotate')
      for (let i = 0; i < rounds; i++) {
        const statuses = results.map((r) => r[i])
        expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
        expect(statuses.filter((status) => status === 'reused')).toHaveLength(replicas - 1)
      }
      expect(await count('refresh_families WHERE revoked_at IS NULL')).toBe(0)
      // Each family: its first token, spent, and the one its winner added.
      expect(await count('refresh_tokens')).toBe(2 * rounds)
    })

    it('lets exactly one process rotate each token for its client; another client changes nothing', async () => {
      url = await database.fresh()
      const store = await database.open(url)
      for (let i = 0; i < rounds; i++) {
        await startFamily(store, refreshFamily({ familyId: `family-${i}` }), `rt-${i}`)
      }
      const results = await race<string>('rotate-for-client')
      for (let i = 0; i < rounds; i++) {
        const statuses = results.map((r) => r[i])
        expect(statuses[0]).toBe('not_found')
        expect(statuses.filter((status) => status === 'rotated')).toHaveLength(1)
        expect(statuses.filter((status) => status === 'reused')).toHaveLength(replicas - 2)
      }
      expect(await count('refresh_families WHERE revoked_at IS NULL')).toBe(0)
      expect(await count('refresh_tokens')).toBe(2 * rounds)
    })

    it('lets exactly one process insert each (tenant, kid)', async () => {
      url = await database.fresh()
      const results = await race<boolean>('key')
      for (let i = 0; i < rounds; i++) {
        expect(results.filter((r) => r[i] === true)).toHaveLength(1)
      }
      expect(await count('keys')).toBe(rounds)
    })

    it('grants no more than either limit among reservations from four processes', async () => {
      url = await database.fresh()
      // replica.mjs reserves user u<i % 3> (limit 10) with one address (limit 25), both or none.
      const results = await race<number>('reserve')
      const granted = results.flat().filter((user) => user >= 0)
      expect(results.flat()).toHaveLength(rounds * replicas)
      expect(granted).toHaveLength(25)
      const store = await database.open(url)
      expect(await attemptsHeld(store, 'addr:192.0.2.1', t0)).toBe(25)
      for (const user of [0, 1, 2]) {
        const grantedToUser = granted.filter((u) => u === user).length
        expect(grantedToUser).toBeLessThanOrEqual(10)
        // A reservation refused by the address counted nothing on the user.
        expect(await attemptsHeld(store, `user:acme:u${user}`, t0)).toBe(grantedToUser)
      }
    })

    it('answers true to exactly one process for each mark', async () => {
      url = await database.fresh()
      const results = await race<boolean>('mark')
      for (let i = 0; i < rounds; i++) {
        expect(results.filter((r) => r[i] === true)).toHaveLength(1)
      }
      expect(await count('marks')).toBe(rounds)
    })

    it('stores exactly max_registrations of the registrations from four processes', async () => {
      url = await database.fresh()
      // replica.mjs registers client-<i>-<worker> with acme, max 25.
      const results = await race<boolean>('register')
      expect(results.flat()).toHaveLength(rounds * replicas)
      expect(results.flat().filter(Boolean)).toHaveLength(25)
      expect(await count('registered_clients')).toBe(25)
      const store = await database.open(url)
      for (const [worker, answers] of results.entries()) {
        for (const [i, registered] of answers.entries()) {
          const found = await store.clientRegistrations.findRegisteredClient(
            'acme',
            `client-${i}-${worker}`,
          )
          expect(found !== undefined).toBe(registered)
        }
      }
    })

    it('answers every process the one stored value of each secret', async () => {
      url = await database.fresh()
      const results = await race<string>('secret')
      expect(await count('secrets')).toBe(rounds)
      const store = await database.open(url)
      for (let i = 0; i < rounds; i++) {
        // The port answers the stored value to any later candidate.
        const stored = await store.secrets.getOrCreateSecret(`secret-${i}`, 'a later candidate')
        expect(stored).toMatch(new RegExp(`^value-${i}-\\d$`))
        expect(results.map((r) => r[i])).toEqual(Array.from({ length: replicas }, () => stored))
      }
    })
  })
}
