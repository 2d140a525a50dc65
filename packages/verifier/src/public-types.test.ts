import type { Middleware } from 'koa'
import type { RequestHandler } from 'express'
import { describe, expectTypeOf, it } from 'vitest'
import {
  createMemoryReplayCache,
  createVerifier,
  isVerifierError,
  renderError,
  VerifierError,
} from './index.js'
import type {
  AccessTokenClaims,
  Algorithm,
  AuthContext,
  AuthScheme,
  DpopOptions,
  DpopReplayCache,
  ErrorResponse,
  TokenHeader,
  VerifiedToken,
  Verifier,
  VerifierErrorCode,
  VerifierEvent,
  VerifierOptions,
  VerifierStats,
  ProtectedResourceMetadata,
  ResourceMetadataOptions,
} from './index.js'
import {
  bearer as koaBearer,
  protectedResourceMetadata as koaMetadata,
  requireScope as koaRequireScope,
} from './koa.js'
import type { KoaAuthState } from './koa.js'
import {
  bearer as expressBearer,
  protectedResourceMetadata as expressMetadata,
  requireScope as expressRequireScope,
} from './express.js'
import { protectedResourceMetadataResponse, verifyRequest } from './fetch.js'
import type { VerifyRequestResult } from './fetch.js'

describe('public types', () => {
  it('createVerifier takes options and returns a Verifier', () => {
    expectTypeOf(createVerifier).parameter(0).toEqualTypeOf<VerifierOptions>()
    expectTypeOf(createVerifier).returns.toEqualTypeOf<Verifier>()
    expectTypeOf<Verifier['verify']>().returns.resolves.toEqualTypeOf<VerifiedToken>()
    expectTypeOf<Verifier['stats']>().returns.toEqualTypeOf<VerifierStats>()
  })

  it('accepts process.env values and a global fetch', () => {
    expectTypeOf<{
      issuer: string
      secret: string | undefined
      fetch: typeof fetch
    }>().toExtend<VerifierOptions>()
    expectTypeOf<{
      issuer: string[]
      audience: string[]
      algorithms: Algorithm[]
    }>().toExtend<VerifierOptions>()
    expectTypeOf<{ issuer: string; algorithms: ['RS384'] }>().not.toExtend<VerifierOptions>()
    expectTypeOf<{ audience: string }>().not.toExtend<VerifierOptions>()
  })

  it('types the claims and header that are checked', () => {
    expectTypeOf<VerifiedToken['payload']>().toEqualTypeOf<AccessTokenClaims>()
    expectTypeOf<AccessTokenClaims['iss']>().toEqualTypeOf<string>()
    expectTypeOf<AccessTokenClaims['exp']>().toEqualTypeOf<number>()
    expectTypeOf<AccessTokenClaims['scope']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<TokenHeader['alg']>().toEqualTypeOf<'HS256' | 'RS256'>()
  })

  it('gives errors a closed union of codes', () => {
    expectTypeOf<VerifierError['code']>().toEqualTypeOf<VerifierErrorCode>()
    expectTypeOf<'ERR_TOKEN_EXPIRED'>().toExtend<VerifierErrorCode>()
    expectTypeOf<'ERR_SOMETHING'>().not.toExtend<VerifierErrorCode>()
    expectTypeOf(isVerifierError).guards.toEqualTypeOf<VerifierError>()
    expectTypeOf(renderError).returns.toEqualTypeOf<ErrorResponse>()
    expectTypeOf<ErrorResponse['status']>().toEqualTypeOf<400 | 401 | 403 | 503>()
  })

  it('discriminates events by type', () => {
    type Fetch = Extract<VerifierEvent, { type: 'jwks_fetch' }>
    expectTypeOf<Fetch['keys']>().toEqualTypeOf<number>()
    expectTypeOf<VerifierEvent['type']>().toEqualTypeOf<
      'jwks_fetch' | 'jwks_fetch_failed' | 'jwks_stale' | 'kid_unknown' | 'token_rejected'
    >()
  })

  it('types the Koa adapter state', () => {
    expectTypeOf(koaBearer).returns.toEqualTypeOf<Middleware<KoaAuthState>>()
    expectTypeOf(koaRequireScope).returns.toEqualTypeOf<Middleware<KoaAuthState>>()
    expectTypeOf<KoaAuthState['auth']>().toEqualTypeOf<AuthContext>()
    expectTypeOf<AuthContext['scopes']>().toEqualTypeOf<readonly string[]>()
  })

  it('types the Express adapter and req.auth', () => {
    expectTypeOf(expressBearer).returns.toEqualTypeOf<RequestHandler>()
    expectTypeOf(expressRequireScope).returns.toEqualTypeOf<RequestHandler>()
    expectTypeOf<Express.Request['auth']>().toEqualTypeOf<AuthContext | undefined>()
  })

  it('types the fetch adapter result as a union on ok', () => {
    expectTypeOf(verifyRequest).returns.resolves.toEqualTypeOf<VerifyRequestResult>()
    expectTypeOf<Extract<VerifyRequestResult, { ok: true }>['auth']>().toEqualTypeOf<AuthContext>()
    expectTypeOf<
      Extract<VerifyRequestResult, { ok: false }>['response']
    >().toEqualTypeOf<Response>()
    expectTypeOf(verifyRequest).parameter(0).toExtend<{ readonly headers: Headers }>()
    expectTypeOf<Request>().toExtend<Parameters<typeof verifyRequest>[0]>()
  })

  it('types the protected resource metadata option and middleware', () => {
    expectTypeOf<{ resource: number }>().not.toExtend<ResourceMetadataOptions>()
    expectTypeOf<VerifierOptions['resourceMetadata']>().toEqualTypeOf<
      ResourceMetadataOptions | undefined
    >()
    expectTypeOf<{
      issuer: string
      resourceMetadata: { scopesSupported: string[] }
    }>().toExtend<VerifierOptions>()
    expectTypeOf(koaMetadata).parameter(0).toEqualTypeOf<Verifier>()
    expectTypeOf(koaMetadata).returns.toEqualTypeOf<Middleware>()
    expectTypeOf(expressMetadata).returns.toEqualTypeOf<RequestHandler>()
    expectTypeOf(protectedResourceMetadataResponse).returns.toEqualTypeOf<Response | undefined>()
    expectTypeOf<Request>().toExtend<Parameters<typeof protectedResourceMetadataResponse>[1]>()
    expectTypeOf<ProtectedResourceMetadata['bearer_methods_supported']>().toEqualTypeOf<
      ['header']
    >()
  })

  it('types the dpop option and its replay cache', () => {
    expectTypeOf<VerifierOptions['dpop']>().toEqualTypeOf<DpopOptions | undefined>()
    expectTypeOf<{
      issuer: string
      dpop: { required: boolean; maxAge: number; publicUrl: string }
    }>().toExtend<VerifierOptions>()
    expectTypeOf<{ issuer: string; dpop: { maxAge: '60s' } }>().not.toExtend<VerifierOptions>()
    expectTypeOf<{ issuer: string; dpop: { nonce: true } }>().not.toExtend<VerifierOptions>()
    // A shared cache: synchronous or asynchronous, one atomic call.
    expectTypeOf<{
      add: (jti: string, expiresAt: number) => Promise<boolean>
    }>().toExtend<DpopReplayCache>()
    expectTypeOf<{ add: (jti: string, expiresAt: number) => boolean }>().toExtend<DpopReplayCache>()
    expectTypeOf<{ add: (jti: string) => Promise<string> }>().not.toExtend<DpopReplayCache>()
    expectTypeOf<{ has: (jti: string) => boolean }>().not.toExtend<DpopReplayCache>()
    expectTypeOf(createMemoryReplayCache).returns.toEqualTypeOf<DpopReplayCache>()
    expectTypeOf<DpopOptions['replayCache']>().toEqualTypeOf<DpopReplayCache | undefined>()
    expectTypeOf<AuthContext['jkt']>().toEqualTypeOf<string | undefined>()
    expectTypeOf<VerifierError['scheme']>().toEqualTypeOf<AuthScheme | undefined>()
    expectTypeOf<AuthScheme>().toEqualTypeOf<'Bearer' | 'DPoP'>()
    expectTypeOf<'ERR_DPOP_PROOF_INVALID'>().toExtend<VerifierErrorCode>()
    // A fetch Request carries what a DPoP proof is checked against.
    expectTypeOf<Request>().toExtend<Parameters<typeof verifyRequest>[0]>()
  })

  it('exposes VerifierError as a class', () => {
    expectTypeOf(VerifierError).toBeConstructibleWith('ERR_TOKEN_INVALID', 'message')
    expectTypeOf<VerifierError>().toExtend<Error>()
  })
})
