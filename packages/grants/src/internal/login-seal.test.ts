import { randomBytes } from 'node:crypto'
import { CompactEncrypt } from 'jose'
import { describe, expect, it } from 'vitest'
import type { SecretStore } from '../ports.js'
import { loginSealKey, openLogin, sealLogin } from './login-seal.js'
import type { SealedLogin } from './login-seal.js'

const t0 = 1_700_000_000_000
const login: SealedLogin = {
  id: 'form-1',
  tenant: 'acme',
  clientId: '22222222-2222-4222-8222-222222222222',
  redirectUri: 'http://127.0.0.1:51234/cb',
  scope: 'read write',
  state: 'ünïcode & = ? state',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  bindingHash: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg',
  expiresAt: t0 + 600_000,
}

function secretStore(): SecretStore & { calls: number } {
  const values = new Map<string, string>()
  return {
    calls: 0,
    getOrCreateSecret(name, candidate) {
      this.calls++
      if (!values.has(name)) values.set(name, candidate)
      return Promise.resolve(values.get(name)!)
    },
  }
}

describe('login seal', () => {
  const key = randomBytes(32)

  it('opens what it sealed, for the same tenant, until it expires', async () => {
    const sealed = await sealLogin(login, key)
    expect(sealed.split('.')).toHaveLength(5)
    // Encrypted: the state, client and redirect are not readable from the form.
    expect(Buffer.from(sealed.replace(/\./g, ''), 'base64url').toString('latin1')).not.toContain(
      '127.0.0.1',
    )
    expect(await openLogin(sealed, 'acme', key, t0)).toStrictEqual(login)
    expect(await openLogin(sealed, 'acme', key, login.expiresAt - 1)).toStrictEqual(login)
    expect(await openLogin(sealed, 'acme', key, login.expiresAt)).toBeUndefined()
  })

  it('carries the sid of a "Continue as" form, and none for a login form', async () => {
    const confirm: SealedLogin = { ...login, nonce: 'n-1', sid: 'sid-alice' }
    expect(await openLogin(await sealLogin(confirm, key), 'acme', key, t0)).toStrictEqual(confirm)
    expect(await openLogin(await sealLogin(login, key), 'acme', key, t0)).not.toHaveProperty('sid')
  })

  it('carries the user of a consent form and prompt=consent, and neither for a login form', async () => {
    const consent: SealedLogin = {
      ...login,
      promptConsent: true,
      user: {
        sub: 'alice-sub',
        claims: { name: 'Alice', groups: ['a', 'b'], nested: { x: 1 } },
        signIn: { authTime: t0 - 5_000, sid: 'sid-alice' },
      },
    }
    expect(await openLogin(await sealLogin(consent, key), 'acme', key, t0)).toStrictEqual(consent)
    const plain = { ...consent, user: { sub: 'alice-sub', claims: {} } }
    expect(await openLogin(await sealLogin(plain, key), 'acme', key, t0)).toStrictEqual(plain)
    const opened = await openLogin(await sealLogin(login, key), 'acme', key, t0)
    expect(opened).not.toHaveProperty('user')
    expect(opened).not.toHaveProperty('promptConsent')
  })

  it('leaves absent state and challenge absent', async () => {
    const bare: SealedLogin = { ...login }
    delete bare.state
    delete bare.codeChallenge
    expect(await openLogin(await sealLogin(bare, key), 'acme', key, t0)).toStrictEqual(bare)
  })

  it('refuses another tenant, another key, altered bytes and garbage', async () => {
    const sealed = await sealLogin(login, key)
    expect(await openLogin(sealed, 'globex', key, t0)).toBeUndefined()
    expect(await openLogin(sealed, 'acme', randomBytes(32), t0)).toBeUndefined()
    const parts = sealed.split('.')
    const ciphertext = Buffer.from(parts[3]!, 'base64url')
    ciphertext[0]! ^= 1
    parts[3] = ciphertext.toString('base64url')
    expect(await openLogin(parts.join('.'), 'acme', key, t0)).toBeUndefined()
    for (const garbage of ['', 'x', 'a.b.c.d.e', '....', '\u0000'.repeat(5000)]) {
      expect(await openLogin(garbage, 'acme', key, t0)).toBeUndefined()
    }
  })

  it('refuses a validly encrypted payload that is not a sealed login', async () => {
    const encrypt = (payload: unknown) =>
      new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .encrypt(key)
    const exp = Math.floor(t0 / 1000) + 60
    expect(await openLogin(await encrypt({ jti: 'x', exp }), 'acme', key, t0)).toBeUndefined()
    expect(
      await openLogin(
        await encrypt({ jti: 'x', exp, tnt: 'acme', cid: 1, ruri: 'u', scp: '', bnd: 'b' }),
        'acme',
        key,
        t0,
      ),
    ).toBeUndefined()
    // No expiry: refused, never valid forever.
    expect(
      await openLogin(
        await encrypt({ jti: 'x', tnt: 'acme', cid: 'c', ruri: 'u', scp: '', bnd: 'b' }),
        'acme',
        key,
        t0,
      ),
    ).toBeUndefined()
  })

  it('reads the key once per store, and two stores over one secret agree', async () => {
    const shared = secretStore()
    const keys = await Promise.all(Array.from({ length: 20 }, () => loginSealKey(shared)))
    expect(shared.calls).toBe(1)
    expect(new Set(keys.map((k) => Buffer.from(k).toString('hex'))).size).toBe(1)
    expect(keys[0]).toHaveLength(32)

    // Another process on the same database: its own candidate loses to the stored value.
    const replica: SecretStore = {
      getOrCreateSecret: (name, candidate) => shared.getOrCreateSecret(name, candidate),
    }
    const sealed = await sealLogin(login, await loginSealKey(shared))
    expect(await openLogin(sealed, 'acme', await loginSealKey(replica), t0)).toStrictEqual(login)
  })

  it('asks again after a failed read, and refuses a stored value that is not a key', async () => {
    let fail = true
    const flaky: SecretStore = {
      getOrCreateSecret: (_name, candidate) =>
        fail ? Promise.reject(new Error('database down')) : Promise.resolve(candidate),
    }
    await expect(loginSealKey(flaky)).rejects.toThrow('database down')
    fail = false
    expect(await loginSealKey(flaky)).toHaveLength(32)

    const wrong: SecretStore = { getOrCreateSecret: () => Promise.resolve('too-short') }
    await expect(loginSealKey(wrong)).rejects.toThrow(TypeError)
  })
})
