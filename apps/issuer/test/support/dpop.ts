import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { JWK, KeyLike } from 'jose'

/** The clients and hosts of the `dpop` fixture. */
export const DP = {
  host: 'dp.test',
  issuer: 'http://dp.test',
  spa: '22222222-2222-4222-8222-222222222222',
  web: { id: '88888888-8888-4888-8888-888888888888', secret: 'dp-web-app-secret' },
  service: { id: '66666666-6666-4666-8666-666666666666', secret: 'dp-service-secret' },
  bound: { id: '77777777-7777-4777-8777-777777777777', secret: 'dp-bound-client-secret' },
  redirectUri: 'http://localhost:9000/cb',
}
export const DPN = {
  host: 'dpn.test',
  issuer: 'http://dpn.test',
  spa: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
  service: { id: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', secret: 'dpn-service-secret' },
}

/** A DPoP key pair of a client, and the proofs it makes. */
export interface DpopKey {
  jkt: string
  jwk: JWK
  proof(claims?: DpopProofClaims): Promise<string>
}

export interface DpopProofClaims {
  htm?: string
  htu?: string
  iat?: number
  nonce?: string
  /** The access token the proof goes with: its hash becomes `ath`. */
  accessToken?: string
  jti?: string
}

/** A fresh key; proofs default to POST http://dp.test/token, now. */
export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(
    alg,
    alg === 'EdDSA' ? { crv: 'Ed25519' } : undefined,
  )
  const jwk = await exportJWK(publicKey)
  return {
    jkt: await calculateJwkThumbprint(jwk, 'sha256'),
    jwk,
    proof: (claims = {}) => signProof(privateKey, alg, jwk, claims),
  }
}

function signProof(key: KeyLike, alg: string, jwk: JWK, claims: DpopProofClaims): Promise<string> {
  return new SignJWT({
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm ?? 'POST',
    htu: claims.htu ?? `${DP.issuer}/token`,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    ...(claims.nonce === undefined ? {} : { nonce: claims.nonce }),
    ...(claims.accessToken === undefined
      ? {}
      : { ath: createHash('sha256').update(claims.accessToken).digest('base64url') }),
  })
    .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk })
    .sign(key)
}
