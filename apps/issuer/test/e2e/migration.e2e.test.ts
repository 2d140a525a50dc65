/**
 * The HS256 → RS256 migration of docs/migration.md, end to end, under load: a real issuer and
 * the demo API (`@tessera/demo-api`, whose verifier accepts HS256 and RS256) while a bounded
 * loop keeps getting tokens and calling the API with them and with tokens issued earlier.
 *
 * One injected clock drives the issuer and the API's verifier; timers stay real. The spawned CLI
 * of the "rotate by CLI" step runs on the real clock; the test clock is near real time by then.
 */
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:http'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createApp } from '@tessera/demo-api'
import type { DemoApi } from '@tessera/demo-api'
import { revokeKey, rotateKey } from '@tessera/keys'
import type { VerifierEvent } from '@tessera/verifier'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { postForm, send } from '../support/http.js'
import { loopbackFetch } from '../support/fetch.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, HS, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const HOUR = 3_600_000
/** JWKS_GRACE_HOURS: the default, 2 × the default token lifetime of 2 h. */
const GRACE_MS = 4 * HOUR
/** The verifier's defaults (packages/verifier/src/options.ts); createApp does not change them. */
const VERIFIER_COOLDOWN_MS = 30_000
/** A token is used by the load loop only while it has this much life left (beyond any leeway). */
const MARGIN_S = 10
/** The loop stops by itself after this many API requests. */
const MAX_API_REQUESTS = 4_000

interface Issued {
  token: string
  alg: string
  kid: string | undefined
  /** `exp`, in seconds. */
  exp: number
  /** The step during which it was issued. */
  step: string
}

const realNow = Date.now
let offset = 0
/** The one clock of the test: the issuer's `clock` and the API verifier's `now`. */
const clock = (): number => realNow() + offset
const setClock = (at: number): void => {
  offset = at - realNow()
}
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('HS256 → RS256 migration under load (docs/migration.md)', () => {
  const tmp = tempDir()
  const cleanups: (() => Promise<void> | void)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
    tmp.remove()
  })

  it(
    'keeps every API call that should succeed succeeding through switch, rollback, rotations and the grace',
    { timeout: 120_000 },
    async () => {
      const started = performance.now()
      // Start at 23:52 UTC yesterday: the restart step crosses the date line with a jump of a few
      // minutes, so the tokens issued before it are still valid after it.
      const todayMidnight = Math.floor(realNow() / 86_400_000) * 86_400_000
      setClock(todayMidnight - 8 * 60_000)
      const dateOf = (at: number): string => new Date(at).toISOString().slice(0, 10)
      const yesterday = dateOf(todayMidnight - 1)
      const today = dateOf(todayMidnight)

      const configDir = join(tmp.dir, 'config')
      cpSync(join(FIXTURES, 'migration'), configDir, { recursive: true })
      const tenantsFile = join(configDir, 'tenants.yaml')
      const setAlgorithm = (alg: 'HS256' | 'RS256'): void => {
        const text = readFileSync(tenantsFile, 'utf8').replace(
          /jwt_algorithm: \w+/,
          `jwt_algorithm: ${alg}`,
        )
        // Written whole then renamed: the issuer's watcher never sees half a file.
        writeFileSync(`${tenantsFile}.tmp`, text)
        renameSync(`${tenantsFile}.tmp`, tenantsFile)
      }
      const databaseUrl = `sqlite:${join(tmp.dir, 'tessera.db')}`
      // Keys and switches sign at once here, each step checking the next token at once; the
      // keys.publish-ahead and keys.algorithm-switch e2e tests cover the wait.
      const vars = { KEY_PUBLISH_AHEAD_SECONDS: '0' }
      const start = (): Promise<InProcessIssuer> =>
        startIssuer({ databaseUrl, config: configDir, clock, vars })

      let issuer: InProcessIssuer = await start()
      cleanups.push(() => issuer.close())
      /** Where the issuer listens; undefined while it restarts. */
      let issuerUrl: string | undefined = issuer.url

      // --- the API, with the verifier's JWKS requests routed to wherever the issuer listens
      const events: VerifierEvent[] = []
      const jwksFetches = (): number => events.filter((e) => e.type === 'jwks_fetch').length
      const api: DemoApi = createApp({
        issuers: [HS.issuer],
        audience: undefined,
        secret: JWT_SECRET,
        algorithms: undefined,
        fetch: (url, init) => {
          if (issuerUrl === undefined) return Promise.reject(new Error('issuer restarting'))
          return loopbackFetch(issuerUrl)(url, init)
        },
        onEvent: (event) => events.push(event),
        now: clock,
      })
      const server: Server = api.app.listen(0, '127.0.0.1')
      await new Promise<void>((resolve) => server.once('listening', resolve))
      cleanups.push(async () => {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      })
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('no port')
      const apiUrl = `http://127.0.0.1:${address.port}`

      // --- tokens and API calls
      let step = 'HS256'
      const issued: Issued[] = []
      const tokenFailures: string[] = []
      const apiFailures: string[] = []
      let apiRequests = 0
      /** RS256 kids the API has been shown, in order of first appearance. */
      const kidsMet: string[] = []

      async function getToken(): Promise<Issued | undefined> {
        const url = issuerUrl
        if (url === undefined) return undefined
        const res = await postForm(url, HS.host, {
          grant_type: 'password',
          username: 'alice',
          password: 'alice-password',
          client_id: HS.client,
          client_secret: HS.secret,
          scope: 'read',
        })
        if (res.status !== 200) {
          tokenFailures.push(`${step}: POST /token ${res.status} ${res.text}`)
          return undefined
        }
        const token = (res.json as { access_token: string }).access_token
        const header = decodeProtectedHeader(token)
        const { exp } = decodeJwt(token)
        const entry: Issued = {
          token,
          alg: String(header.alg),
          kid: header.kid,
          exp: exp as number,
          step,
        }
        issued.push(entry)
        return entry
      }

      const usable = (t: Issued): boolean => t.exp - MARGIN_S > clock() / 1000

      /** One API call that must succeed; a failure is counted, never thrown. */
      async function callApi(t: Issued): Promise<boolean> {
        if (!usable(t)) throw new Error(`test bug: token of ${t.step} used past its exp`)
        if (t.kid !== undefined && !kidsMet.includes(t.kid)) kidsMet.push(t.kid)
        apiRequests += 1
        const res = await send(apiUrl, {
          path: '/me',
          host: 'api.test',
          headers: { authorization: `Bearer ${t.token}` },
        })
        const alg = (res.json as { alg?: string } | undefined)?.alg
        if (res.status === 200 && alg === t.alg) return true
        apiFailures.push(
          `step ${step}: token of ${t.step} (${t.alg} ${t.kid ?? '-'}) → ${res.status} ${res.text}`,
        )
        return false
      }

      /**
       * Calls the API with the first and last usable token of every (alg, kid) issued so far:
       * the oldest tokens of each key, before and after each switch, keep working.
       */
      async function sweep(): Promise<number> {
        const groups = new Map<string, Issued[]>()
        for (const t of issued.filter(usable)) {
          const key = `${t.alg}/${t.kid ?? ''}`
          groups.set(key, [...(groups.get(key) ?? []), t])
        }
        let calls = 0
        for (const group of groups.values()) {
          for (const t of new Set([group[0] as Issued, group.at(-1) as Issued])) {
            await callApi(t)
            calls += 1
          }
        }
        return calls
      }

      // --- the load loop: a fresh token plus three random earlier ones per round, every ~20 ms
      let paused = false
      let stopped = false
      let rounds = 0
      let idle: (() => void) | undefined
      let loopDone = false
      const loop = (async () => {
        while (!stopped && apiRequests < MAX_API_REQUESTS) {
          if (paused) {
            idle?.()
            await sleep(5)
            continue
          }
          const fresh = await getToken()
          const pool = issued.filter(usable)
          const picks = fresh === undefined ? [] : [fresh]
          for (let i = 0; i < 3 && pool.length > 0; i += 1) {
            picks.push(pool[Math.floor(Math.random() * pool.length)] as Issued)
          }
          for (const t of picks) if (!paused && usable(t)) await callApi(t)
          rounds += 1
          await sleep(20)
        }
        loopDone = true
        idle?.()
      })()
      cleanups.push(async () => {
        stopped = true
        await loop
      })
      /** Stops the loop between two calls (before the clock moves or a key is revoked). */
      const pause = (): Promise<void> =>
        new Promise((resolve) => {
          if (loopDone) return resolve()
          idle = () => {
            idle = undefined
            resolve()
          }
          paused = true
        })
      const resume = (): void => {
        paused = false
      }
      const waitRounds = async (n: number): Promise<void> => {
        const target = rounds + n
        while (rounds < target && !stopped && apiRequests < MAX_API_REQUESTS) await sleep(10)
      }
      /** Time passes between steps: more than the verifier's cooldown between JWKS fetches. */
      const advance = async (ms: number): Promise<void> => {
        await pause()
        setClock(clock() + ms)
        resume()
      }
      const reloadKeyRings = async (): Promise<void> => {
        // What the issuer's 5 s key poll does, without waiting for it.
        for (const runtime of issuer.issuer.registry.all()) await runtime.keyRing.reload()
      }
      const hsRing = () => {
        const runtime = issuer.issuer.registry.all().find((r) => r.tenant.name === 'hs')
        if (runtime === undefined) throw new Error('no hs tenant')
        return runtime.keyRing
      }
      /**
       * The key that signs once the tenant was used and its background rotation, if any, has
       * arrived: keys are made on first use, rotations in the background.
       */
      const activeKid = async (): Promise<string> => {
        await hsRing().ensureKey()
        await hsRing().idle()
        const kid = hsRing().activeKid()
        if (kid === undefined) throw new Error('hs has no active key')
        return kid
      }
      const jwksKids = async (): Promise<string[]> => {
        const res = await send(issuer.url, { path: '/.well-known/jwks.json', host: HS.host })
        return (res.json as { keys: { kid: string }[] }).keys.map((k) => k.kid)
      }
      /** A step: what changed, then fresh tokens must carry `alg`/`kid`, and old ones still work. */
      const fetchesPerStep: Record<string, number> = {}
      /** `before`: the JWKS fetch count when the step began, before anything changed. */
      async function check(
        name: string,
        alg: string,
        kid: string | undefined,
        before: number,
      ): Promise<void> {
        const t = await getToken()
        expect(t, name).toBeDefined()
        expect({ alg: t?.alg, kid: t?.kid }, name).toEqual({ alg, kid })
        expect(await callApi(t as Issued), name).toBe(true)
        await sweep()
        await waitRounds(25)
        await sweep()
        fetchesPerStep[name] = jwksFetches() - before
      }

      // 0. HS256: the verifier accepts HS256 with the shared secret and fetches no JWKS.
      await check('HS256', 'HS256', undefined, 0)
      expect(jwksFetches()).toBe(0)

      // 1. HS256 → RS256: edit the YAML, reload.
      await advance(VERIFIER_COOLDOWN_MS + 1_000)
      step = 'RS256'
      let before = jwksFetches()
      setAlgorithm('RS256')
      expect(await issuer.issuer.reload()).toBe(true)
      const k1 = await activeKid()
      expect(k1).toBe(yesterday)
      await check('RS256', 'RS256', k1, before)

      // 2. Rollback to HS256: k1 is retired but stays published for the grace.
      await advance(VERIFIER_COOLDOWN_MS + 1_000)
      step = 'rollback'
      before = jwksFetches()
      setAlgorithm('HS256')
      expect(await issuer.issuer.reload()).toBe(true)
      await check('rollback', 'HS256', undefined, before)
      expect(await jwksKids()).toContain(k1)

      // 3. Forward again: a new key, never the same kid.
      await advance(VERIFIER_COOLDOWN_MS + 1_000)
      step = 'forward'
      before = jwksFetches()
      setAlgorithm('RS256')
      expect(await issuer.issuer.reload()).toBe(true)
      const k2 = await activeKid()
      expect(k2).toBe(`${yesterday}.2`)
      await check('forward', 'RS256', k2, before)

      // 4. Restart on a later UTC date (KEY_ROTATE_ON_RESTART): the API keeps serving the tokens
      // it has while the issuer is down; the issuer comes back on another port, which the
      // verifier's fetch follows.
      await pause()
      issuerUrl = undefined
      step = 'restart'
      before = jwksFetches()
      setClock(todayMidnight + 30_000)
      resume()
      await issuer.close()
      const downSince = performance.now()
      await waitRounds(5)
      issuer = await start()
      const downtimeMs = performance.now() - downSince
      issuerUrl = issuer.url
      const k3 = await activeKid()
      expect(k3).toBe(today)
      await check('restart', 'RS256', k3, before)

      // 5a. Rotate through the API the CLI uses (in process, on the test clock).
      await advance(VERIFIER_COOLDOWN_MS + 1_000)
      step = 'rotate (API)'
      before = jwksFetches()
      const rotated = await rotateKey({ tenant: 'hs', store: issuer.issuer.store.keys, now: clock })
      expect(rotated).toMatchObject({ kid: `${today}.2`, retired: [k3] })
      await reloadKeyRings()
      await check('rotate (API)', 'RS256', rotated.kid, before)

      // 5b. Rotate with the real CLI in a child process (on the real clock, the same UTC date
      // unless the run crosses midnight), while the issuer keeps serving.
      await advance(VERIFIER_COOLDOWN_MS + 1_000)
      step = 'rotate (CLI)'
      before = jwksFetches()
      const cli = await runCli(['keys', 'rotate', '--tenant', 'hs'], {
        DATABASE_URL: databaseUrl,
        TESSERA_CONFIG: configDir,
        ...vars,
      })
      expect(cli.stderr).toBe('')
      expect(cli.status).toBe(0)
      await reloadKeyRings()
      const k5 = await activeKid()
      expect(k5).not.toBe(rotated.kid)
      expect(cli.stdout).toContain(k5)
      await check('rotate (CLI)', 'RS256', k5, before)
      const kidsBeforeGrace = [k1, k2, k3, rotated.kid, k5]
      expect((await jwksKids()).sort()).toEqual([...kidsBeforeGrace].sort())

      // 6. Until exp: just before the oldest token expires, one token of every key still works.
      // The jump exceeds the verifier's cacheMaxAge (1 h), so it refreshes its JWKS once by age.
      await pause()
      step = 'before exp'
      const oldestExp = Math.min(...issued.map((t) => t.exp)) * 1000
      setClock(oldestExp - 30_000)
      const stillValid = issued.filter(usable)
      expect(new Set(stillValid.map((t) => `${t.alg}/${t.kid ?? ''}`)).size).toBe(6)
      const beforeExpFetches = jwksFetches()
      const swept = await sweep()
      const ageRefreshBeforeExp = jwksFetches() - beforeExpFetches
      resume()
      await waitRounds(5)

      // 7. Past the grace: every retired key is pruned, and no token older than it is ever used
      // (the loop only takes tokens with more than MARGIN_S of life left).
      await pause()
      step = 'after grace'
      setClock(Math.max(clock(), realNow()) + GRACE_MS + 2 * 60_000)
      expect(issued.filter(usable)).toEqual([])
      before = jwksFetches()
      resume()
      await reloadKeyRings()
      expect(await jwksKids()).toEqual([k5])
      await check('after grace', 'RS256', k5, before)
      const ageRefreshAfterGrace = jwksFetches() - before

      // The load loop ends here; the revocation below makes tokens fail on purpose.
      stopped = true
      await loop

      // 8. Revoke the active key: it leaves the JWKS at once, the issuer signs with a new one.
      // The verifier still holds the revoked key until it refetches, which it does on an
      // unknown kid once the cooldown has passed (its cacheMaxAge is 1 h, and createApp takes
      // no shorter one): so a token with the new kid, after the cooldown, makes it refetch.
      step = 'revoke'
      const victim = issued.filter((t) => t.kid === k5 && usable(t)).at(-1) as Issued
      expect(victim).toBeDefined()
      const revoked = await revokeKey({
        tenant: 'hs',
        kid: k5,
        algorithm: 'RS256',
        store: issuer.issuer.store.keys,
        now: clock,
      })
      expect(revoked.previousState).toBe('active')
      const k6 = revoked.newActiveKid as string
      expect(k6).toMatch(/^\d{4}-\d{2}-\d{2}(\.\d+)?$/)
      await reloadKeyRings()
      expect(await jwksKids()).toEqual([k6])
      // Not refetched yet: the revoked key's token still passes (docs/migration.md §4.3).
      expect(await callApi(victim)).toBe(true)
      setClock(clock() + VERIFIER_COOLDOWN_MS + 1_000)
      const beforeRevokeFetch = jwksFetches()
      const fresh = (await getToken()) as Issued
      expect({ alg: fresh.alg, kid: fresh.kid }).toEqual({ alg: 'RS256', kid: k6 })
      expect(await callApi(fresh)).toBe(true)
      expect(jwksFetches() - beforeRevokeFetch).toBe(1)
      // Once refetched, the revoked key's tokens fail; this call is expected to fail.
      const apiFailuresBeforeRevoked = apiFailures.length
      expect(await callApi(victim)).toBe(false)
      const revokedFailure = apiFailures.pop()
      expect(apiFailures.length).toBe(apiFailuresBeforeRevoked)
      expect(revokedFailure).toMatch(/→ 401 /)
      const expectedFailures = 1

      // --- the numbers
      const elapsedMs = performance.now() - started
      const fetchEvents = jwksFetches()
      const kidTriggered = new Set(
        events.flatMap((e) => (e.type === 'kid_unknown' && e.refetch ? [e.kid] : [])),
      )
      console.log(
        [
          `migration e2e: ${apiRequests} API requests, ${apiFailures.length} failed that should have succeeded`,
          `(+${expectedFailures} expected: the revoked key's token after the refetch),`,
          `${issued.length} tokens issued (${tokenFailures.length} token failures),`,
          `${fetchEvents} JWKS fetches for ${kidsMet.length} distinct kids met (${kidsMet.join(', ')})`,
          `+ ${ageRefreshBeforeExp + ageRefreshAfterGrace} refresh(es) by age after clock jumps > 1 h,`,
          `issuer down ${Math.round(downtimeMs)} ms during the restart, ${swept} tokens swept just before exp,`,
          `run time ${(elapsedMs / 1000).toFixed(1)} s; fetches per step ${JSON.stringify(fetchesPerStep)}`,
        ].join(' '),
      )

      expect(apiFailures).toEqual([])
      expect(tokenFailures).toEqual([])
      expect(apiRequests).toBeGreaterThan(200)
      expect(apiRequests).toBeLessThanOrEqual(MAX_API_REQUESTS + 20)
      // A JWKS fetch only when a new kid arrived: one per switch to a new key, none for HS256
      // or a rollback, and the only others are the two age refreshes after the clock jumps.
      expect(fetchesPerStep).toEqual({
        HS256: 0,
        RS256: 1,
        rollback: 0,
        forward: 1,
        restart: 1,
        'rotate (API)': 1,
        'rotate (CLI)': 1,
        'after grace': 1,
      })
      expect(ageRefreshBeforeExp).toBe(1)
      expect(ageRefreshAfterGrace).toBe(1)
      expect(kidsMet).toEqual([...kidsBeforeGrace, k6])
      // The first fetch fills the empty cache (k1); each later new kid triggered a refetch.
      expect([...kidTriggered]).toEqual(kidsMet.slice(1))
      expect(fetchEvents).toBe(kidsMet.length + 2)
      // The only unknown kid met inside the cooldown: the revoked one, after the refetch.
      expect(events.filter((e) => e.type === 'kid_unknown' && !e.refetch)).toEqual([
        { type: 'kid_unknown', issuer: HS.issuer, kid: k5, refetch: false },
      ])
      expect(events.filter((e) => e.type === 'jwks_fetch_failed')).toEqual([])
    },
  )
})
