import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { expect } from 'vitest'
import { postForm } from './http.js'
import type { HttpResponse } from './http.js'
import { FIXTURES, HS, JWT_SECRET, RS } from './issuer.js'
import type { IssuerProcess, StartOptions } from './issuer.js'
import { pkce, signIn } from './oauth.js'

const REDIRECT_URI = 'http://localhost:9000/cb'

/**
 * `tessera start --workers 2` on `databaseUrl`, serving the basic fixtures (HS256 and RS256):
 * the options for startIssuer or useIssuer.
 */
export function workersOn(
  databaseUrl: string,
  workers = 2,
  more: Record<string, string> = {},
): StartOptions & { command: 'start' } {
  return {
    command: 'start',
    env: {
      ...more,
      JWT_SECRET,
      KEY_ENCRYPTION_SECRET: randomBytes(32).toString('base64url'),
      TESSERA_CONFIG: join(FIXTURES, 'basic'),
      DATABASE_URL: databaseUrl,
      WORKERS: String(workers),
      // The tests send many parallel password grants for alice: none must be throttled.
      PASSWORD_MAX_FAILURES: '1000',
      PASSWORD_MAX_FAILURES_PER_ADDRESS: '1000',
    },
  }
}

/** The pid of each worker slot as the primary last announced it listening. */
export function workerPids(cli: IssuerProcess): Map<number, number> {
  const pids = new Map<number, number>()
  for (const entry of cli.entries()) {
    if (entry.msg === 'worker listening')
      pids.set(entry.worker as number, entry.workerPid as number)
  }
  return pids
}

/** The pids that logged the request lines of `path`, each with its `worker` field. */
export function requestPids(cli: IssuerProcess, path: string): Set<string> {
  const pids = new Set<string>()
  for (const entry of cli.entries()) {
    if (entry.msg === 'request' && entry.path === path) {
      pids.add(`${entry.pid as number}:${entry.worker as number}`)
    }
  }
  return pids
}

/** A counter's value in the admin listener's /metrics (0 when absent). */
export async function counter(admin: string, series: string): Promise<number> {
  const res = await fetch(`${admin}/metrics`)
  expect(res.status).toBe(200)
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

export const HS_PASSWORD_TOKENS =
  'tessera_tokens_issued_total{tenant="hs",grant_type="password",alg="HS256"}'

/** A password grant at the HS256 tenant (a fresh connection each: the workers take turns). */
export function hsPassword(cli: IssuerProcess): Promise<HttpResponse> {
  return postForm(cli.url, HS.host, {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: HS.client,
    client_secret: HS.secret,
  })
}

/**
 * Password grants in batches of 12 until both workers have served one (the kernel picks the
 * worker that accepts each connection), at most 10 batches; every answer must be 200. Answers
 * how many were sent.
 */
export async function passwordsUntilBothServed(cli: IssuerProcess): Promise<number> {
  let sent = 0
  for (let batch = 0; batch < 10 && requestPids(cli, '/token').size < 2; batch++) {
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => hsPassword(cli).then((res) => res.status)),
    )
    expect(statuses).toEqual(Array<number>(12).fill(200))
    sent += 12
    // Each request is logged by the worker that served it, by the end of that turn.
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(requestPids(cli, '/token').size).toBe(2)
  return sent
}

/** A refresh token of the RS256 tenant, from a sign-in and its code. */
export async function rsRefreshToken(cli: IssuerProcess): Promise<string> {
  const { verifier, challenge } = pkce()
  const { code } = await signIn(cli.url, RS.host, {
    clientId: RS.client,
    redirectUri: REDIRECT_URI,
    challenge,
    scope: 'read',
  })
  const res = await postForm(cli.url, RS.host, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: RS.client,
    client_secret: RS.secret,
  })
  expect(res.status).toBe(200)
  return (res.json as { refresh_token: string }).refresh_token
}

/** Sends the same refresh token `times` at once: how many were answered 200. */
export async function refreshInParallel(
  cli: IssuerProcess,
  token: string,
  times: number,
): Promise<number[]> {
  const results = await Promise.all(
    Array.from({ length: times }, () =>
      postForm(cli.url, RS.host, {
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: RS.client,
        client_secret: RS.secret,
      }),
    ),
  )
  return results.map((res) => res.status)
}

/** Signs alice in and redeems the one code `times` at once: the statuses. */
export async function redeemInParallel(cli: IssuerProcess, times: number): Promise<number[]> {
  const { verifier, challenge } = pkce()
  const { code } = await signIn(cli.url, RS.host, {
    clientId: RS.client,
    redirectUri: REDIRECT_URI,
    challenge,
    scope: 'read',
  })
  const results = await Promise.all(
    Array.from({ length: times }, () =>
      postForm(cli.url, RS.host, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_id: RS.client,
        client_secret: RS.secret,
      }),
    ),
  )
  return results.map((res) => res.status)
}
