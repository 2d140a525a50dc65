import { ProviderFailureError } from '@tessera/grants'
import { describe, expect, it } from 'vitest'
import { createUserAuthenticator } from './scripts.js'
import type { ProviderTools } from './scripts.js'

type Authenticate = (
  credentials: { username: string; password: string },
  tools: ProviderTools,
) => Promise<unknown>

/** An authenticator over in-test provider modules named a.mjs, b.mjs, … */
function chain(timeoutMs: number, ...scripts: Authenticate[]) {
  const files = scripts.map((_, i) => `${String.fromCharCode(97 + i)}.mjs`)
  const modules = new Map(files.map((file, i) => [file, { authenticate: scripts[i]! }]))
  return createUserAuthenticator(files, modules, { timeoutMs })
}

async function failure(promise: Promise<unknown>): Promise<ProviderFailureError> {
  const error: unknown = await promise.catch((e: unknown) => e)
  expect(error).toBeInstanceOf(ProviderFailureError)
  return error as ProviderFailureError
}

const alice = { username: 'alice', password: 'p"ss\\word' }

describe('createUserAuthenticator', () => {
  it('tries providers in order; the first non-null answer wins', async () => {
    const users = chain(
      1000,
      () => Promise.resolve(null),
      () => Promise.resolve(undefined),
      () => Promise.resolve({ sub: 'from-c', claims: { role: 'x' } }),
      () => Promise.reject(new Error('never asked')),
    )
    expect(await users.authenticate(alice)).toEqual({ sub: 'from-c', claims: { role: 'x' } })
  })

  it('gives up on a provider past the timeout, aborting its signal, naming it', async () => {
    let signal: AbortSignal | undefined
    const hanging = chain(
      50,
      () => Promise.resolve(null),
      (_credentials, tools) => {
        signal = tools.signal
        return new Promise(() => undefined)
      },
    )
    const error = await failure(hanging.authenticate(alice))
    expect(error).toMatchObject({
      code: 'ERR_PROVIDER_TIMEOUT',
      provider: 'b.mjs',
      reason: 'no answer within 50 ms',
    })
    expect(signal?.aborted).toBe(true)
  })

  it('reports a provider that throws, synchronously or not, with the password cut out', async () => {
    const message = `bad password ${alice.password} or ${JSON.stringify(alice.password)}`
    const thrown = [
      () => {
        throw new TypeError(message)
      },
      () => Promise.reject(new Error(message)),
      // Scripts may reject with anything; these do what the lint rule exists to prevent.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      () => Promise.reject(message),
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      () => Promise.reject({ password: alice.password }),
      () =>
        Promise.reject(
          Object.defineProperty(new Error(), 'message', {
            get() {
              throw new Error(alice.password)
            },
          }),
        ),
    ] satisfies Authenticate[]
    const reasons = []
    for (const script of thrown) {
      const error = await failure(chain(1000, script).authenticate(alice))
      expect(error.code).toBe('ERR_PROVIDER_FAILED')
      expect(error.message).not.toContain('ss\\')
      reasons.push(error.reason)
    }
    expect(reasons).toEqual([
      'threw TypeError: bad password [password] or "[password]"',
      'threw Error: bad password [password] or "[password]"',
      'threw bad password [password] or "[password]"',
      'threw a value of type object',
      'threw a value that could not be read',
    ])
  })

  it('refuses an answer whose claims are read through a getter that throws', async () => {
    const answer = {
      sub: 'alice',
      get claims(): never {
        throw new Error('no')
      },
    }
    const error = await failure(chain(1000, () => Promise.resolve(answer)).authenticate(alice))
    expect(error.reason).toBe('answered a malformed value: the answer could not be read')
  })
})
