/**
 * Publish ahead: a rotation's key is in the JWKS before it signs, so verifiers that
 * fetched the JWKS a moment before the rotation never meet a kid they are not yet allowed to
 * refetch for. Two verifiers watch a real `tessera dev` process: ours (@tessera/verifier) and
 * jose's createRemoteJWKSet, each with a refetch cooldown shorter than the delay. Run with
 * PUBLISH_AHEAD_SECONDS=0 in the environment, the same scenario shows the failures it prevents.
 */
import { join } from 'node:path'
import { createVerifier } from '@tessera/verifier'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, createAdminClient } from '../support/admin-api.js'
import { eventually } from '../support/eventually.js'
import { loopbackFetch } from '../support/fetch.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, RS, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { rsAccessToken } from '../support/keys.js'

const AHEAD_SECONDS = Number(process.env.PUBLISH_AHEAD_SECONDS ?? 8)
/** Both verifiers may refetch this long after their last fetch: shorter than the delay. */
const COOLDOWN_MS = 3_000
/** The key poll of a running issuer (a CLI rotation reaches it within one). */
const POLL_MS = 5_000

describe('keys published ahead of signing', { timeout: 120_000 }, () => {
  const tmp = tempDir()
  const vars = {
    JWT_SECRET,
    TESSERA_CONFIG: join(FIXTURES, 'basic'),
    DATABASE_URL: `sqlite:${tmp.dir}/tessera.db`,
    ADMIN_TOKEN,
    KEY_PUBLISH_AHEAD_SECONDS: String(AHEAD_SECONDS),
  }
  let cli: IssuerProcess
  const { call } = createAdminClient(() => cli.admin)

  beforeAll(async () => {
    cli = await startIssuer({ command: 'dev', env: vars })
  })
  afterAll(async () => {
    await cli?.close()
    tmp.remove()
  })

  /** Ours and jose's, each having fetched the JWKS once, just now. */
  async function freshVerifiers(): Promise<((token: string) => Promise<void>)[]> {
    const issuer = `${RS.issuer}:${new URL(cli.url).port}`
    const ours = createVerifier({
      issuer,
      audience: RS.audience,
      cooldown: COOLDOWN_MS,
      fetch: loopbackFetch(cli.url),
    })
    const jwks = createRemoteJWKSet(new URL('/.well-known/jwks.json', cli.url), {
      headers: { host: RS.host },
      cooldownDuration: COOLDOWN_MS,
    })
    const verifiers = [
      async (token: string) => {
        await ours.verify(token)
      },
      async (token: string) => {
        await jwtVerify(token, jwks, { issuer, audience: RS.audience })
      },
    ]
    const token = await rsAccessToken(cli.url)
    for (const verify of verifiers) await verify(token)
    return verifiers
  }

  /**
   * Requests and verifies tokens without a pause for `ms`: every verification failure, and the
   * kids that signed, in order of first appearance.
   */
  async function watch(
    verifiers: ((token: string) => Promise<void>)[],
    ms: number,
  ): Promise<{ failures: string[]; kids: string[]; tokens: number }> {
    const failures: string[] = []
    const kids: string[] = []
    let tokens = 0
    const end = Date.now() + ms
    while (Date.now() < end) {
      const token = await rsAccessToken(cli.url)
      tokens++
      const kid = decodeProtectedHeader(token).kid ?? ''
      if (!kids.includes(kid)) kids.push(kid)
      for (const [index, verify] of verifiers.entries()) {
        await verify(token).catch((error: unknown) => {
          failures.push(`${index === 0 ? 'ours' : 'jose'} ${kid}: ${String(error)}`)
        })
      }
    }
    return { failures, kids, tokens }
  }

  it('an admin API rotation: no verification fails before, during or after the switch', async () => {
    const verifiers = await freshVerifiers()
    const before = decodeProtectedHeader(await rsAccessToken(cli.url)).kid
    const res = await call('POST', '/admin/tenants/rs/keys/rotate')
    expect(res.status).toBe(201)
    const { kid, retired } = res.json as { kid: string; retired: unknown[] }
    const result = await watch(verifiers, AHEAD_SECONDS * 1000 + POLL_MS)
    expect(result.failures).toEqual([])
    expect(result.kids).toEqual(AHEAD_SECONDS === 0 ? [kid] : [before, kid])
    expect(retired).toEqual([])
    // The old key is retired by the key poll once the new one signs, and stays published.
    await eventually(async () => {
      const keys = await call('GET', '/admin/tenants/rs/keys')
      const states = (keys.json as { keys: { kid: string; state: string }[] }).keys
      expect(states.find((key) => key.kid === before)?.state).toBe('retired')
      expect(states.find((key) => key.kid === kid)?.state).toBe('active')
    })
  })

  it('a `tessera keys rotate` from another process: no verification fails', async () => {
    const verifiers = await freshVerifiers()
    const before = decodeProtectedHeader(await rsAccessToken(cli.url)).kid
    const run = await runCli(['keys', 'rotate', '--tenant', 'rs', '--dev'], vars)
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const kid = /new active key (\S+)/.exec(run.stdout)?.[1]
    const result = await watch(verifiers, AHEAD_SECONDS * 1000 + POLL_MS)
    expect(result.failures).toEqual([])
    expect(result.kids).toEqual(AHEAD_SECONDS === 0 ? [kid] : [before, kid])
  })

  it('keys list shows the waiting key as next with the time it signs from; ?now=true skips the wait', async () => {
    const rotated = await call('POST', '/admin/tenants/rs/keys/rotate')
    const { kid, signsFrom } = rotated.json as { kid: string; signsFrom: string }
    const list = await runCli(['keys', 'list', '--tenant', 'rs', '--json', '--dev'], vars)
    const entry = (
      JSON.parse(list.stdout) as { kid: string; state: string; signsFrom: string }[]
    ).find((key) => key.kid === kid)
    expect(entry).toMatchObject({ state: AHEAD_SECONDS === 0 ? 'active' : 'next', signsFrom })
    const now = await call('POST', '/admin/tenants/rs/keys/rotate?now=true')
    expect(now.status).toBe(201)
    const urgent = now.json as { kid: string; signsFrom: string }
    expect(Date.parse(urgent.signsFrom)).toBeLessThanOrEqual(Date.now())
    expect(decodeProtectedHeader(await rsAccessToken(cli.url)).kid).toBe(urgent.kid)
    const bad = await call('POST', '/admin/tenants/rs/keys/rotate?now=soon')
    expect(bad.status).toBe(400)
  })
})
