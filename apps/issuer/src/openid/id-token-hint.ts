import type { JwksDocument, JWTPayload, KeyRing } from '@tessera/keys'
import { compactVerify, createLocalJWKSet } from 'jose'

/**
 * The check of an `id_token_hint` (RP-Initiated Logout): an RS256 JWS by a key the tenant still
 * publishes, whose payload names the tenant as `iss` and has the `azp` every Tessera ID token
 * carries (an access token of an RS256 tenant, signed by the same keys, has none). Its `exp` is
 * not checked: a relying party may log out long after the sign-in. Answers the payload, or
 * undefined.
 */
export function createIdTokenHintVerifier(
  issuer: string,
  ring: KeyRing,
): (token: string) => Promise<JWTPayload | undefined> {
  let cached: { doc: JwksDocument; set: ReturnType<typeof createLocalJWKSet> } | undefined
  const keySet = (): ReturnType<typeof createLocalJWKSet> => {
    const doc = ring.jwks()
    if (cached?.doc !== doc) cached = { doc, set: createLocalJWKSet({ keys: [...doc.keys] }) }
    return cached.set
  }
  const decoder = new TextDecoder()
  return async (token) => {
    try {
      // Before its first key this ring knows none another replica may have signed with.
      if (ring.activeKid() === undefined) await ring.ensureKey()
      const { payload } = await compactVerify(token, keySet(), { algorithms: ['RS256'] })
      const claims: unknown = JSON.parse(decoder.decode(payload))
      if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined
      const record = claims as JWTPayload
      return record.iss === issuer && typeof record.azp === 'string' ? record : undefined
    } catch {
      // A malformed, forged or foreign token, or a key no longer published.
      return undefined
    }
  }
}
