/**
 * `tessera start --workers 2` on PostgreSQL: each worker with its own pool on a
 * database created for this file, started on it while still empty.
 */
import { createTestDatabase } from '@tessera/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startIssuer } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import {
  counter,
  HS_PASSWORD_TOKENS,
  passwordsUntilBothServed,
  redeemInParallel,
  refreshInParallel,
  rsRefreshToken,
  workerPids,
  workersOn,
} from '../support/workers.js'

describe('tessera start --workers 2 on PostgreSQL', { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let cli: IssuerProcess

  beforeAll(async () => {
    database = await createTestDatabase()
    cli = await startIssuer(workersOn(database.url))
  })
  afterAll(async () => {
    await cli?.close()
    await database?.drop()
  })

  it('serves from both workers and sums their counters in /metrics', async () => {
    const before = await counter(cli.admin, HS_PASSWORD_TOKENS)
    const sent = await passwordsUntilBothServed(cli)
    expect(await counter(cli.admin, HS_PASSWORD_TOKENS)).toBe(before + sent)
    const res = await fetch(`${cli.admin}/readyz`)
    expect(res.status).toBe(200)
  })

  it('rotates a refresh token once across the workers', async () => {
    const statuses = await refreshInParallel(cli, await rsRefreshToken(cli), 8)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 400)).toHaveLength(7)
  })

  it('redeems an authorization code once across the workers', async () => {
    const statuses = await redeemInParallel(cli, 8)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 400)).toHaveLength(7)
  })

  it('exits 0 on SIGTERM once both workers have stopped', async () => {
    const pids = [...workerPids(cli).values()]
    expect(pids).toHaveLength(2)
    await cli.close()
    expect(cli.child.exitCode).toBe(0)
    const stopped = cli.entries().filter((entry) => entry.msg === 'worker stopped')
    expect(stopped.map((entry) => entry.workerPid)).toEqual(expect.arrayContaining(pids))
  })
})
