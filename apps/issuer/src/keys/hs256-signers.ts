import { createHs256Signer } from '@tessera/keys'
import type { TokenSigner } from '@tessera/keys'

/**
 * One HS256 signer per secret, shared by the tenants that sign with it: most tenants share
 * JWT_SECRET, and each signer holds its imported key.
 */
export function sharedHs256Signers(): (secret: string) => TokenSigner {
  const signers = new Map<string, TokenSigner>()
  return (secret) => {
    let signer = signers.get(secret)
    if (signer === undefined) {
      signer = createHs256Signer(secret)
      signers.set(secret, signer)
    }
    return signer
  }
}
