import { importJWK } from 'jose'
import { KeyError } from '../errors.js'
import type { TokenSigner } from '../signer.js'
import { signClaims } from './sign-claims.js'
import type { RsaPrivateJwkFields } from './stored-key.js'

/** Imports a private JWK once and returns a signer that stamps its kid on every token. */
export async function createRs256Signer(
  jwk: RsaPrivateJwkFields,
  kid: string,
  tenant: string,
): Promise<TokenSigner> {
  let key: Awaited<ReturnType<typeof importJWK>>
  try {
    key = await importJWK(jwk, 'RS256')
  } catch (cause) {
    throw new KeyError(
      'ERR_KEY_INVALID',
      `the private key "${kid}" of tenant "${tenant}" does not import as an RS256 key`,
      { cause },
    )
  }
  const header = { alg: 'RS256', typ: 'JWT', kid }
  return {
    alg: 'RS256',
    async sign(claims) {
      return { token: await signClaims(claims, header, key), kid }
    },
  }
}
