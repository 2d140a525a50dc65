import type {
  AuthorizationCodeStore,
  ExpiryStore,
  RefreshTokenStore,
  Reservation,
  RotateResult,
  ThrottleStore,
} from '@tessera/grants'
import type { KeyStore } from '@tessera/keys'
import { describe, expectTypeOf, it } from 'vitest'
import {
  createMemoryStore,
  openSqliteStore,
  openStore,
  type OpenStoreOptions,
  type ParsedConfigStore,
  type StoreError,
  type Store,
  type StoreErrorCode,
} from './index.js'

describe('@tessera/store public types', () => {
  it('implements the ports of keys and grants', () => {
    expectTypeOf<Store['keys']>().toEqualTypeOf<KeyStore>()
    expectTypeOf<Store['throttle']>().toEqualTypeOf<ThrottleStore>()
    expectTypeOf<Store['codes']>().toEqualTypeOf<AuthorizationCodeStore>()
    expectTypeOf<Store['refreshTokens']>().toEqualTypeOf<RefreshTokenStore>()
    expectTypeOf<Store['expiry']>().toEqualTypeOf<ExpiryStore>()
    expectTypeOf<Store['parsedConfig']>().toEqualTypeOf<ParsedConfigStore>()
    expectTypeOf<
      ReturnType<RefreshTokenStore['rotateRefreshToken']>
    >().resolves.toEqualTypeOf<RotateResult>()
    expectTypeOf<
      ReturnType<ThrottleStore['reserveAttempts']>
    >().resolves.toEqualTypeOf<Reservation>()
    expectTypeOf(openStore).toEqualTypeOf<
      (url: string, options?: OpenStoreOptions) => Promise<Store>
    >()
    expectTypeOf<OpenStoreOptions>().toEqualTypeOf<{ maxConnections?: number }>()
    expectTypeOf(openSqliteStore).toEqualTypeOf<(path: string) => Promise<Store>>()
    expectTypeOf(createMemoryStore).toEqualTypeOf<() => Store>()
    expectTypeOf<StoreError['code']>().toEqualTypeOf<StoreErrorCode>()
  })
})
