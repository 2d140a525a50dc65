/**
 * The promise of publish ahead at the default settings, in real time: KEY_PUBLISH_AHEAD_SECONDS
 * left at 60, and two verifiers left at their defaults (ours and jose's createRemoteJWKSet, both
 * with a 30 s refetch cooldown), each having fetched the JWKS a moment before. A `tessera keys
 * rotate` from another process at one tenant, and a switch from HS256 to RS256 at another, are
 * followed by 90 s of continuous token requests, each verified by both: not one fails.
 */
import { createSecretKey } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createVerifier } from '@tessera/verifier'
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
  SignJWT,
} from 'jose'
import type { JWTHeaderParameters } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loopbackFetch } from '../support/fetch.js'
import { basicAuth, postForm } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { InProcessIssuer } from '../support/issuer.js'

const WATCH_MS = 90_000
/**
 * Unset: the default (60). PUBLISH_AHEAD_SECONDS=0 in the environment runs the same scenario
 * with keys that sign at once, and shows the failures that publishing ahead prevents.
 */
const AHEAD: Record<string, string> =
  process.env.PUBLISH_AHEAD_SECONDS === undefined
    ? {}
    : { KEY_PUBLISH_AHEAD_SECONDS: process.env.PUBLISH_AHEAD_SECONDS }
/** Between two token requests of one tenant: continuous, yet light on a 2-core CI machine. */
const PACE_MS = 250
const SERVICE_SECRET = 'publish-ahead-service-secret'
/** The service client of each tenant: client_ids are unique across tenants. */
const CLIENT_IDS: Record<string, string> = {
  rotating: '0b000000-0000-4000-8000-000000000001',
  switching: '0b000000-0000-4000-8000-000000000002',
}
const secretKey = createSecretKey(Buffer.from(JWT_SECRET, 'utf8'))

type Verify = (token: string) => Promise<void>

describe('publish ahead at the default settings', { timeout: 180_000 }, () => {
  const tmp = tempDir()
  const config = join(tmp.dir, 'config')
  const databaseUrl = `sqlite:${join(tmp.dir, 'tessera.db')}`
  let issuer: InProcessIssuer

  function writeTenant(name: string, algorithm: 'HS256' | 'RS256'): void {
    writeFileSync(
      join(config, `${name}.yaml`),
      [
        `name: ${name}`,
        'config:',
        `  hosts: [${name}.test]`,
        `  jwt_algorithm: ${algorithm}`,
        `  providers: ['${join(FIXTURES, 'basic', 'providers', 'users.mjs')}']`,
        '  clients:',
        `    - client_id: ${CLIENT_IDS[name]}`,
        `      client_secret: ${SERVICE_SECRET}`,
        '      grant_types: [client_credentials]',
        '      scopes: [read]',
        '',
      ].join('\n'),
    )
  }

  async function token(tenant: string): Promise<string> {
    const res = await postForm(
      issuer.url,
      `${tenant}.test`,
      { grant_type: 'client_credentials' },
      { authorization: basicAuth(CLIENT_IDS[tenant] ?? '', SERVICE_SECRET) },
    )
    expect(res.status).toBe(200)
    return (res.json as { access_token: string }).access_token
  }

  /** Ours and jose's, at their defaults, for one tenant. */
  function verifiers(tenant: string): { ours: Verify; jose: Verify; jwks: () => Promise<void> } {
    const iss = `http://${tenant}.test`
    const ours = createVerifier({
      issuer: iss,
      audience: iss,
      secret: JWT_SECRET,
      fetch: loopbackFetch(issuer.url),
    })
    const remote = createRemoteJWKSet(new URL('/.well-known/jwks.json', issuer.url), {
      headers: { host: `${tenant}.test` },
    })
    const byAlg = (header: JWTHeaderParameters) =>
      header.alg === 'HS256' ? secretKey : remote(header)
    return {
      ours: async (jwt) => {
        await ours.verify(jwt)
      },
      jose: async (jwt) => {
        await jwtVerify(jwt, byAlg, { issuer: iss, audience: iss })
      },
      // A token under a kid that no tenant has makes both fetch the JWKS now, as an HS256
      // tenant's verifiers would have on meeting any RS256 token.
      jwks: async () => {
        const stranger = await generateKeyPair('RS256')
        const unknown = await new SignJWT({})
          .setProtectedHeader({ alg: 'RS256', kid: 'none' })
          .setIssuer(iss)
          .setAudience(iss)
          .setExpirationTime('1h')
          .sign(stranger.privateKey)
        await expect(ours.verify(unknown)).rejects.toThrow(/unknown key/)
        await expect(remote({ alg: 'RS256', kid: 'none' })).rejects.toThrow(/no applicable key/)
      },
    }
  }

  /** Tokens of `tenant` for WATCH_MS, each verified by both: failures, and what signed them. */
  async function watch(
    tenant: string,
    check: { ours: Verify; jose: Verify },
  ): Promise<{ failures: string[]; signers: string[]; tokens: number }> {
    const failures: string[] = []
    const signers: string[] = []
    let tokens = 0
    const end = Date.now() + WATCH_MS
    while (Date.now() < end) {
      const jwt = await token(tenant)
      tokens++
      const { alg, kid } = decodeProtectedHeader(jwt)
      const signer = `${alg ?? ''} ${kid ?? ''}`.trim()
      if (!signers.includes(signer)) signers.push(signer)
      for (const [name, verify] of Object.entries(check)) {
        await verify(jwt).catch((error: unknown) => {
          failures.push(`${name} ${signer} after ${tokens} tokens: ${String(error)}`)
        })
      }
      await new Promise((resolve) => setTimeout(resolve, PACE_MS))
    }
    return { failures, signers, tokens }
  }

  beforeAll(async () => {
    mkdirSync(config)
    writeTenant('rotating', 'RS256')
    writeTenant('switching', 'HS256')
    issuer = await startIssuer({ databaseUrl, config, vars: AHEAD })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp.remove()
  })

  it('a `keys rotate` and a switch from HS256: 90 s of tokens, not one refused', async () => {
    const rotating = verifiers('rotating')
    const switching = verifiers('switching')
    const before = decodeProtectedHeader(await token('rotating')).kid
    // Both verifiers of each tenant have just fetched its JWKS.
    await rotating.ours(await token('rotating'))
    await rotating.jose(await token('rotating'))
    await switching.jwks()

    const rotation = await runCli(['keys', 'rotate', '--tenant', 'rotating', '--dev'], {
      JWT_SECRET,
      TESSERA_CONFIG: config,
      DATABASE_URL: databaseUrl,
      ...AHEAD,
    })
    expect(rotation.status).toBe(0)
    const kid = /new active key (\S+)/.exec(rotation.stdout)?.[1]
    writeTenant('switching', 'RS256')
    expect(await issuer.issuer.reload()).toBe(true)

    const [rotated, switched] = await Promise.all([
      watch('rotating', rotating),
      watch('switching', switching),
    ])
    expect(rotated.failures).toEqual([])
    expect(switched.failures).toEqual([])
    // The old key signed for the 60 s, then the new one; HS256 the same, then RS256.
    expect(rotated.signers).toEqual([`RS256 ${before}`, `RS256 ${kid}`])
    expect(switched.signers.map((signer) => signer.split(' ')[0])).toEqual(['HS256', 'RS256'])
  })
})
