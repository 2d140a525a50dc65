/**
 * `tessera start --workers 2` on one SQLite file: a real primary and its two
 * workers, exercised over HTTP on loopback, one of them killed while a client keeps sending.
 */
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from '../support/eventually.js'
import { send } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, HS, JWT_SECRET, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  counter,
  HS_PASSWORD_TOKENS,
  hsPassword,
  passwordsUntilBothServed,
  redeemInParallel,
  refreshInParallel,
  requestPids,
  rsRefreshToken,
  workerPids,
  workersOn,
} from '../support/workers.js'

describe('tessera start --workers 2 on SQLite', { timeout: 120_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  let cli: IssuerProcess

  beforeAll(async () => {
    tmp = tempDir()
    // A fresh file: the primary migrates it before the workers open it.
    cli = await startIssuer(workersOn(`sqlite:${join(tmp.dir, 'tessera.db')}`))
  })
  afterAll(async () => {
    await cli?.close()
    tmp?.remove()
  })

  it('forks two workers that share the port, and counts their tokens together in /metrics', async () => {
    expect(workerPids(cli).size).toBe(2)
    const before = await counter(cli.admin, HS_PASSWORD_TOKENS)
    const sent = await passwordsUntilBothServed(cli)
    const pids = [...workerPids(cli).entries()].map(([slot, pid]) => `${pid}:${slot}`)
    expect([...requestPids(cli, '/token')].sort()).toEqual(pids.sort())
    expect(await counter(cli.admin, HS_PASSWORD_TOKENS)).toBe(before + sent)
    expect(await counter(cli.admin, 'tessera_workers_listening')).toBe(2)
  })

  it('stores the parse results of the tenant files once, from worker 1', async () => {
    const stored = await eventually(() => {
      const lines = cli.entries().filter((e) => e.msg === 'parse results of tenant files stored')
      if (lines.length === 0) throw new Error('not stored yet')
      return lines
    })
    // Every process reads the cache; worker 1 alone stores it.
    const read = cli
      .entries()
      .filter((e) => e.msg === 'tenant files read; parse results from the database')
    expect(read.map((e) => e.worker).sort()).toEqual([1, 2, undefined])
    // Past the moment a worker would have stored its own (a second after it loaded).
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(
      cli
        .entries()
        .filter((e) => e.msg === 'parse results of tenant files stored')
        .map((e) => e.worker),
    ).toEqual([1])
    expect(stored[0]!.added).toBeGreaterThan(0)
  })

  it('answers /readyz on the admin port once every worker is ready', async () => {
    const res = await fetch(`${cli.admin}/readyz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ready' })
  })

  it('rotates a refresh token once, whichever workers the parallel requests reach', async () => {
    const token = await rsRefreshToken(cli)
    const statuses = await refreshInParallel(cli, token, 8)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 400)).toHaveLength(7)
  })

  it('redeems an authorization code once across the workers', async () => {
    const statuses = await redeemInParallel(cli, 8)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 400)).toHaveLength(7)
  })

  it('restarts a killed worker while the other answers every request', async () => {
    const killed = workerPids(cli).get(1)!
    const survivor = workerPids(cli).get(2)!
    const restartsBefore = await counter(cli.admin, 'tessera_worker_restarts_total')
    // Both workers issue tokens: worker 1's count must outlive it.
    await passwordsUntilBothServed(cli)
    const tokensBefore = await counter(cli.admin, HS_PASSWORD_TOKENS)
    let sending = true
    let answered = 0
    const failures: string[] = []
    // Four clients in a loop, each with one request in flight at a time on a fresh connection.
    const loops = Array.from({ length: 4 }, async () => {
      while (sending) {
        try {
          // A bound, should a connection be left unanswered (round robin can leave one).
          const res = await Promise.race([
            send(cli.url, { path: '/.well-known/jwks.json', host: HS.host }),
            new Promise<never>((_, reject) =>
              setTimeout(() => reject(new Error('no answer in 5 s')), 5_000).unref(),
            ),
          ])
          if (res.status === 200) answered++
          else failures.push(`status ${res.status}`)
        } catch (error) {
          failures.push((error as Error).message)
        }
      }
    })
    await eventually(() => expect(answered).toBeGreaterThan(20))
    process.kill(killed, 'SIGKILL')
    await eventually(
      () => {
        const pid = workerPids(cli).get(1)
        expect(pid).toBeDefined()
        expect(pid).not.toBe(killed)
      },
      { timeoutMs: 15_000 },
    )
    const afterRestart = answered
    await eventually(() => expect(answered).toBeGreaterThan(afterRestart + 20))
    sending = false
    await Promise.all(loops)
    // At most the request each client had in flight on the killed worker failed.
    expect(failures.length, failures.join('; ')).toBeLessThanOrEqual(4)
    expect(workerPids(cli).get(2)).toBe(survivor)
    const exited = cli
      .entries()
      .find((entry) => entry.msg === 'worker exited unasked: restarting it')
    expect(exited).toMatchObject({ worker: 1, workerPid: killed, signal: 'SIGKILL', crashes: 1 })
    expect(exited?.restartInMs).toBe(100)
    expect(await counter(cli.admin, 'tessera_worker_restarts_total')).toBe(restartsBefore + 1)
    // The new worker counts from zero; the total does not fall.
    expect(await counter(cli.admin, HS_PASSWORD_TOKENS)).toBe(tokensBefore)
    // The new worker takes requests too.
    await eventually(async () => {
      await hsPassword(cli)
      expect(requestPids(cli, '/token')).toContain(`${workerPids(cli).get(1)}:1`)
    })
  })

  it('passes SIGHUP on to every worker, each reloading', async () => {
    cli.child.kill('SIGHUP')
    await eventually(() => {
      const reloading = cli
        .entries()
        .filter((entry) => entry.msg === 'SIGHUP: reloading the configuration')
      expect(reloading.map((entry) => entry.worker).sort()).toEqual([1, 2])
    })
    // Without ADMIN_TOKEN the primary holds no tenant of its own to reload.
    const primary = cli
      .entries()
      .filter((entry) => entry.msg === 'SIGHUP: every worker reloads the configuration')
    expect(primary).toHaveLength(1)
    expect((await fetch(`${cli.admin}/healthz`)).status).toBe(200)
    expect((await hsPassword(cli)).status).toBe(200)
  })

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const pids = [...workerPids(cli).values()]
    await cli.close()
    expect(cli.child.exitCode).toBe(0)
    const lines = cli.entries()
    expect(lines.filter((entry) => entry.msg === 'worker stopped').map((e) => e.workerPid)).toEqual(
      expect.arrayContaining(pids),
    )
    // Each worker finished its own shutdown (closed its store) before the primary's last line.
    const stopped = lines.filter((entry) => entry.msg === 'stopped')
    expect(stopped.map((entry) => entry.worker ?? 'primary').sort()).toEqual([1, 2, 'primary'])
    expect(stopped.at(-1)?.worker).toBeUndefined()
  })
})

describe('tessera start --workers: refusals', () => {
  it.each([['0'], ['-1'], ['two'], ['65']])('refuses WORKERS=%s in one line', async (value) => {
    const result = await runCli(['start', '--port', '0', `--workers=${value}`], {
      JWT_SECRET,
      TESSERA_CONFIG: 'does-not-matter',
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toBe(
      'tessera: configuration problems:\n' +
        'environment: WORKERS: must be auto or an integer between 1 and 64\n',
    )
  })

  it('stops a bad configuration before any fork, one line per problem', async () => {
    const tmp = tempDir()
    try {
      // The basic fixtures' RS256 tenant needs KEY_ENCRYPTION_SECRET under start.
      const result = await runCli(['start', '--port', '0', '--admin-port', '0', '--workers', '2'], {
        JWT_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'basic'),
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
      })
      expect(result.status).toBe(1)
      expect(result.stderr).toMatch(/^tessera: configuration problems:\n[^\n]+\n$/)
      expect(result.stderr).toContain('KEY_ENCRYPTION_SECRET')
      expect(result.stdout).not.toContain('worker forked')
    } finally {
      tmp.remove()
    }
  })

  it('stops when the workers cannot listen, the problem printed once', async () => {
    const tmp = tempDir()
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = taken.address() as AddressInfo
      const result = await runCli(
        ['start', '--host', '127.0.0.1', '--port', String(port), '--admin-port', 'off'],
        {
          JWT_SECRET,
          KEY_ENCRYPTION_SECRET: 'k'.repeat(43),
          TESSERA_CONFIG: join(FIXTURES, 'basic'),
          DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
          WORKERS: '2',
        },
      )
      expect(result.status).toBe(1)
      expect(result.stderr).toBe(`tessera: port ${port} is in use; set PORT\n`)
      expect(result.stdout).not.toContain('tessera issuer listening')
    } finally {
      taken.close()
      tmp.remove()
    }
  })

  it('keeps an issuer in the primary for the admin API when ADMIN_TOKEN is set', async () => {
    const tmp = tempDir()
    const token = 'a'.repeat(40)
    const withApi = await startIssuer(
      workersOn(`sqlite:${join(tmp.dir, 'tessera.db')}`, 2, {
        ADMIN_TOKEN: token,
      }),
    )
    try {
      const res = await fetch(`${withApi.admin}/admin/tenants`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { tenants: { hosts: string[] }[] }
      const hosts = body.tenants.flatMap((tenant) => tenant.hosts)
      expect(hosts).toEqual(expect.arrayContaining([HS.host, RS.host]))
      withApi.child.kill('SIGHUP')
      await eventually(() =>
        expect(
          withApi
            .entries()
            .filter(
              (entry) => entry.msg === 'SIGHUP: reloading the configuration, and every worker too',
            ),
        ).toHaveLength(1),
      )
      expect((await hsPassword(withApi)).status).toBe(200)
    } finally {
      await withApi.close()
      tmp.remove()
    }
  })

  it('refuses --workers under dev', async () => {
    const result = await runCli(['dev', '--port', '0', '--workers', '2'], {})
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      'environment: WORKERS: tessera dev runs one process; workers are for tessera start',
    )
  })
})
