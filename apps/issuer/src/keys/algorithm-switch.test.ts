import { createHs256Signer, type SignedToken, type TokenSigner } from '@tessera/keys'
import { decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import { createSwitchingSigner } from './algorithm-switch.js'

const SECRET = 'test-secret-0123456789-abcdefghijklmnop'

/** A stand-in RS256 signer: the switch only chooses between signers. */
const rs256: TokenSigner = {
  alg: 'RS256',
  sign: (): Promise<SignedToken> =>
    Promise.resolve({ token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.sig', kid: 'k' }),
}

describe('createSwitchingSigner', () => {
  it('signs HS256 before the recorded instant and RS256 from it, alg following', async () => {
    let now = 1_000
    const signer = createSwitchingSigner(createHs256Signer(SECRET), rs256, 2_000, () => now)
    expect(signer.alg).toBe('HS256')
    expect(decodeProtectedHeader((await signer.sign({ sub: 'a' })).token).alg).toBe('HS256')
    now = 1_999
    expect(decodeProtectedHeader((await signer.sign({ sub: 'a' })).token).alg).toBe('HS256')
    now = 2_000
    expect(signer.alg).toBe('RS256')
    expect(decodeProtectedHeader((await signer.sign({ sub: 'a' })).token).alg).toBe('RS256')
  })
})
