import { decodeProtectedHeader, jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { KeyError } from './errors.js'
import { createHs256Signer } from './signer.js'

const secret = 'a-shared-secret-of-at-least-32-characters'

describe('createHs256Signer', () => {
  it('signs a token that verifies with the same secret', async () => {
    const signer = createHs256Signer(secret)
    const claims = { iss: 'https://acme.test', sub: 'alice', aud: 'api', jti: 'j1', scope: 'a b' }
    const { token, kid } = await signer.sign(claims)

    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
    })
    expect(signer.alg).toBe('HS256')
    expect(kid).toBeUndefined()
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(payload).toEqual(claims)
  })

  it('adds no claims of its own', async () => {
    const { token } = await createHs256Signer(secret).sign({ sub: 'alice' })
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret))
    expect(payload).toEqual({ sub: 'alice' })
    expect(decodeProtectedHeader(token)).not.toHaveProperty('kid')
  })

  it('accepts a secret of exactly 32 characters', () => {
    expect(createHs256Signer('x'.repeat(32)).alg).toBe('HS256')
  })

  it('refuses a shorter secret without echoing it', () => {
    const short = 'too-short-secret'
    let caught: unknown
    try {
      createHs256Signer(short)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(KeyError)
    expect((caught as KeyError).code).toBe('ERR_SECRET_TOO_SHORT')
    expect((caught as KeyError).message).not.toContain(short)
  })

  it('throws a TypeError for a secret that is not a string', () => {
    expect(() => createHs256Signer(undefined as unknown as string)).toThrow(TypeError)
  })
})
