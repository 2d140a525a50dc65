import type { JWTPayload } from 'jose'
import { describe, expectTypeOf, it } from 'vitest'
import {
  createHs256Signer,
  type KeyError,
  kidForDate,
  loadKeyRing,
  readKeys,
  revokeKey,
  rotateKey,
  type JwksDocument,
  type KeyInfo,
  type KeyErrorCode,
  type KeyRing,
  type KeyStore,
  type RevokeKeyResult,
  type RotateKeyResult,
  type SignedToken,
  type TokenSigner,
} from './index.js'

describe('@tessera/keys public types', () => {
  it('keeps the shapes the issuer and grants rely on', () => {
    expectTypeOf(kidForDate).toEqualTypeOf<(epochMs: number) => string>()
    expectTypeOf(createHs256Signer).returns.toEqualTypeOf<TokenSigner>()
    expectTypeOf<TokenSigner['alg']>().toEqualTypeOf<'HS256' | 'RS256'>()
    expectTypeOf<TokenSigner['sign']>().toEqualTypeOf<
      (claims: JWTPayload) => Promise<SignedToken>
    >()
    expectTypeOf(loadKeyRing).parameter(0).toHaveProperty('store').toEqualTypeOf<KeyStore>()
    expectTypeOf(loadKeyRing).returns.resolves.toEqualTypeOf<KeyRing>()
    expectTypeOf<KeyRing['jwks']>().returns.toEqualTypeOf<JwksDocument>()
    expectTypeOf<JwksDocument['keys'][number]>().toEqualTypeOf<{
      readonly kty: 'RSA'
      readonly n: string
      readonly e: string
      readonly kid: string
      readonly alg: 'RS256'
      readonly use: 'sig'
    }>()
    expectTypeOf<KeyError['code']>().toEqualTypeOf<KeyErrorCode>()
    expectTypeOf(rotateKey).returns.resolves.toEqualTypeOf<RotateKeyResult>()
    expectTypeOf(revokeKey).parameter(0).toHaveProperty('kid').toEqualTypeOf<string>()
    expectTypeOf(revokeKey).returns.resolves.toEqualTypeOf<RevokeKeyResult>()
    expectTypeOf(readKeys).returns.resolves.toEqualTypeOf<KeyInfo[]>()
    expectTypeOf<KeyInfo>().not.toHaveProperty('privateKey')
  })
})
