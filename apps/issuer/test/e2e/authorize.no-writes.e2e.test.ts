import { existsSync, statSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import { HS, tempDir, useIssuer } from '../support/issuer.js'
import { authorizePath, pkce, signIn, SPA } from '../support/oauth.js'

const GETS = 10_000
const HEADS = 500
const CONCURRENCY = 16

/** Bytes of the SQLite database: the file and its write-ahead log. */
function databaseBytes(file: string): number {
  return [file, `${file}-wal`].reduce(
    (total, path) => total + (existsSync(path) ? statSync(path).size : 0),
    0,
  )
}

// A GET of /authorize stores nothing: anyone may send it, so a row per request would let
// 2,000 requests grow the database by tens of megabytes.
describe('GET /authorize writes nothing', () => {
  const tmp = tempDir()
  const database = `${tmp.dir}/tessera.db`
  afterAll(() => tmp.remove())
  const issuer = useIssuer({ databaseUrl: `sqlite:${database}` })

  it(`grows the database by less than 2 MB over ${GETS} GETs with a 1,000-character state`, async () => {
    const before = databaseBytes(database)
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    const { port } = new URL(issuer.url)
    const statuses = new Map<number, number>()
    const one = (method: 'GET' | 'HEAD', i: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const path = authorizePath({
          response_type: 'code',
          client_id: SPA.clientId,
          redirect_uri: SPA.redirectUri,
          scope: 'read',
          // Distinct on every request, as an attacker's would be.
          state: `${i}`.padStart(1000, 's'),
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        })
        const req = request(
          { host: '127.0.0.1', port, method, path, agent, headers: { host: HS.host } },
          (res) => {
            statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1)
            res.resume()
            res.on('end', resolve)
            res.on('error', reject)
          },
        )
        req.on('error', reject)
        req.end()
      })
    let next = 0
    const total = GETS + HEADS
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          const i = next++
          // Every twenty-first request is a HEAD (which runs the GET handler): 500 of 10,500.
          await one(i % 21 === 20 ? 'HEAD' : 'GET', i)
        }
      }),
    )
    agent.destroy()

    expect(Object.fromEntries(statuses)).toEqual({ 200: total })
    const grown = databaseBytes(database) - before
    expect(grown).toBeLessThan(2 * 1024 * 1024)

    // Still answering, and a normal sign-in and token request work.
    const { verifier, challenge } = pkce()
    const { code } = await signIn(issuer.url, HS.host, { challenge, state: 's'.repeat(1000) })
    const token = await postForm(issuer.url, HS.host, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: SPA.redirectUri,
      code_verifier: verifier,
      client_id: SPA.clientId,
    })
    expect(token.status).toBe(200)
  }, 180_000)
})
