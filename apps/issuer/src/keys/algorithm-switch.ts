import type { SignedToken, TokenSigner } from '@tessera/keys'

/**
 * The access-token signer of a tenant switched from HS256 to RS256 whose RS256 period has not
 * begun: HS256 until `rs256Since` (KEY_PUBLISH_AHEAD_SECONDS after the switch was applied, as the
 * store's algorithm record says, the same instant on every replica), the ring's RS256 signer from
 * then on. Meanwhile the first RS256 key is already published, so verifiers that fetched the
 * JWKS before the switch can refetch before they meet its kid.
 */
export function createSwitchingSigner(
  hs256: TokenSigner,
  rs256: TokenSigner,
  rs256Since: number,
  now: () => number,
): TokenSigner {
  const current = (): TokenSigner => (now() < rs256Since ? hs256 : rs256)
  return {
    get alg() {
      return current().alg
    },
    sign: (claims): Promise<SignedToken> => current().sign(claims),
  }
}
