import { describe, expect, it } from 'vitest'
import { StoreError } from '../../errors.js'
import {
  codeRecord,
  consentRecord,
  freshStoreEach,
  registeredClient,
  sessionRecord,
  sha256,
  t0,
  type OpenStore,
} from './fixtures.js'

/** ping and close: a closed store refuses every use. */
export function lifecycleContract(open: OpenStore): void {
  describe('lifecycle', () => {
    const store = freshStoreEach(open)

    it('answers ping while open and refuses any use after close', async () => {
      await expect(store().ping()).resolves.toBeUndefined()
      await store().close()
      await store().close()
      for (const use of [
        () => store().ping(),
        () => store().keys.listKeys('acme'),
        () => store().keys.retireKey('acme', '2025-03-10', t0),
        () => store().keys.updatePrivateKey('acme', '2025-03-10', 'a', 'b'),
        () => store().keys.deleteKey('acme', '2025-03-10'),
        () => store().keys.listPrunedKids('acme'),
        () =>
          store().throttle.reserveAttempts([{ key: 'acme:alice', limit: 1 }], {
            now: t0,
            leaseMs: 1,
          }),
        () =>
          store().throttle.settleAttempts(
            { hold: 'h', fail: [], clear: ['acme:alice'] },
            { now: t0, windowMs: 1 },
          ),
        () => store().codes.saveCode(codeRecord()),
        () => store().codes.findCode('acme', sha256('code-1')),
        () => store().codes.redeemCode('acme', sha256('code-1'), t0, undefined),
        () => store().refreshTokens.findRefreshToken('acme', sha256('rt-1')),
        () => store().refreshTokens.rotateRefreshToken('acme', sha256('a'), sha256('b'), t0),
        () =>
          store().refreshTokens.rotateRefreshTokenForClient(
            'acme',
            'web',
            sha256('a'),
            sha256('b'),
            t0,
          ),
        () => store().refreshTokens.revokeFamily('acme', 'family-1', t0),
        () => store().refreshTokens.revokeFamiliesByCode('acme', sha256('code-1'), t0),
        () => store().expiry.purgeExpired(t0),
        () => store().sessions.createSession(sessionRecord()),
        () => store().sessions.findSession('acme', sha256('session-1')),
        () => store().sessions.endSession('acme', 'sid-1', t0),
        () => store().clientRegistrations.registerClient(registeredClient(), 10),
        () => store().clientRegistrations.findRegisteredClient('acme', 'client-1'),
        () => store().clientRegistrations.updateRegisteredClient(registeredClient()),
        () => store().clientRegistrations.deleteRegisteredClient('acme', 'client-1'),
        // A lookup no row can answer is refused as closed too.
        () => store().clientRegistrations.findRegisteredClient('acme', ''),
        () => store().consents.saveConsent(consentRecord()),
        () => store().consents.findConsent('acme', 'alice', 'client-1', '', t0),
        () => store().consents.deleteConsents('acme', 'client-1'),
        () => store().parsedConfig.list(),
        () => store().parsedConfig.add([{ key: sha256('file'), value: 'v' }], t0),
        () => store().parsedConfig.prune(new Set(), t0),
      ]) {
        const error: unknown = await use().catch((e: unknown) => e)
        expect(error).toBeInstanceOf(StoreError)
        expect(error).toMatchObject({ code: 'ERR_STORE_CLOSED' })
      }
    })
  })
}
