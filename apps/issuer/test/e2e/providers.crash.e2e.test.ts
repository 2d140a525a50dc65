/**
 * Provider scripts that try to end the process: a real `tessera dev` process whose
 * provider throws from a timer with the password in the message, calls process.exit or
 * process.abort; another tenant's token requests keep being answered, and nothing the process
 * writes holds the password.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { FIXTURES, JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'

/** Marks every password these tests send, so that the output can be searched for any of them. */
const SECRET = 'Pw-3a9d51c7'

const CRASH = {
  host: 'crash.test',
  id: '77777777-7777-4777-8777-777777777777',
  secret: 'crash-client-secret',
}
const CALM = {
  host: 'calm.test',
  id: '88888888-8888-4888-8888-888888888888',
  secret: 'calm-client-secret',
}

function passwordGrant(
  url: string,
  tenant: typeof CRASH,
  username: string,
  password: string,
): Promise<HttpResponse> {
  return postForm(url, tenant.host, {
    grant_type: 'password',
    username,
    password,
    client_id: tenant.id,
    client_secret: tenant.secret,
    scope: 'read',
  })
}

describe('provider scripts that try to end the process', { timeout: 120_000 }, () => {
  let tmp: ReturnType<typeof tempDir>
  let issuer: IssuerProcess

  beforeAll(async () => {
    tmp = tempDir()
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: join(FIXTURES, 'crashing'),
        DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
        PASSWORD_MAX_FAILURES: '100',
        PASSWORD_MAX_FAILURES_PER_ADDRESS: '100',
      },
    })
  })
  afterAll(async () => {
    await issuer?.close()
    tmp?.remove()
  })

  /** Lines since `from` whose `msg` is `msg`, waiting up to 2 s for `count` of them. */
  async function linesWith(from: number, msg: string, count = 1): Promise<unknown[]> {
    for (let i = 0; i < 100; i++) {
      const lines = issuer.logs.slice(from).flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string }
          return entry.msg === msg ? [entry] : []
        } catch {
          return []
        }
      })
      if (lines.length >= count) return lines
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`no ${count} "${msg}" lines in:\n${issuer.logs.slice(from).join('\n')}`)
  }

  async function expectCalmServed(): Promise<void> {
    const res = await passwordGrant(issuer.url, CALM, 'bob', 'bob-password')
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ token_type: 'bearer', scope: 'read' })
    expect(issuer.child.exitCode).toBeNull()
  }

  it('logs an exception thrown from a provider timer without its message, and serves on', async () => {
    const from = issuer.logs.length
    const res = await passwordGrant(issuer.url, CRASH, 'alice', `timer-throw:${SECRET}`)
    expect(res.status).toBe(400)
    const [line] = await linesWith(from, 'an exception was thrown and nothing caught it')
    expect(line).toMatchObject({ level: 50, kind: 'Error' })
    expect((line as { at: string[] }).at[0]).toContain('crashing.mjs')
    await expectCalmServed()
  })

  it('refuses process.exit during a provider call: that call fails, the issuer serves on', async () => {
    const from = issuer.logs.length
    const res = await passwordGrant(issuer.url, CRASH, 'alice', `exit:${SECRET}`)
    expect(res.status).toBe(500)
    expect(res.json).toEqual({ error: 'server_error', error_description: 'internal error' })
    await linesWith(from, 'a script called a function that ends the process: refused')
    expect(await linesWith(from, 'provider failed')).toMatchObject([
      {
        reason:
          'threw ProcessExitRefusedError: process.exit is refused: the issuer ends only on a signal',
      },
    ])
    await expectCalmServed()
  })

  it('refuses process.exit from a provider timer and process.abort during a call', async () => {
    const from = issuer.logs.length
    expect((await passwordGrant(issuer.url, CRASH, 'alice', `timer-exit:${SECRET}`)).status).toBe(
      400,
    )
    expect((await passwordGrant(issuer.url, CRASH, 'alice', `abort:${SECRET}`)).status).toBe(500)
    const refused = await linesWith(
      from,
      'a script called a function that ends the process: refused',
      2,
    )
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ call: 'process.exit' }),
        expect.objectContaining({ call: 'process.abort' }),
      ]),
    )
    // The refusal from the timer is an exception nothing caught, logged as such.
    expect(await linesWith(from, 'an exception was thrown and nothing caught it')).toMatchObject([
      { kind: 'ProcessExitRefusedError' },
    ])
    await expectCalmServed()
  })

  it('never writes a password to stdout or stderr, and still stops cleanly on SIGTERM', async () => {
    await expectCalmServed()
    await issuer.close()
    expect(issuer.child.exitCode).toBe(0)
    const output = issuer.logs.join('\n')
    expect(output).toContain('"msg":"stopped"')
    expect(output).not.toContain(SECRET)
    expect(output).not.toContain('bob-password')
  })
})
