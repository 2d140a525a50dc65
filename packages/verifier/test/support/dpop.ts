import { createHash, randomUUID } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { JWK, JWTPayload, KeyLike } from 'jose'
import { send } from './servers.js'
import type { Received } from './servers.js'

/** The proof algorithms RFC 9449 clients use and the verifier accepts. */
export const PROOF_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const
export type ProofAlgorithm = (typeof PROOF_ALGORITHMS)[number]

/** A client's DPoP key pair: what it signs proofs with and what its tokens are bound to. */
export interface DpopKey {
  alg: ProofAlgorithm
  privateKey: KeyLike
  /** The public JWK, as a proof header carries it. */
  jwk: JWK
  /** The RFC 7638 SHA-256 thumbprint: a bound token's `cnf.jkt`. */
  jkt: string
  /** The private JWK, for tests that put private members where only public ones belong. */
  privateJwk: JWK
}

/** A fresh DPoP key pair (`EdDSA`: Ed25519). */
export async function createDpopKey(alg: ProofAlgorithm = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  })
  const jwk = await exportJWK(publicKey)
  return {
    alg,
    privateKey,
    jwk,
    jkt: await calculateJwkThumbprint(jwk),
    privateJwk: await exportJWK(privateKey),
  }
}

/** The `ath` of a token: base64url SHA-256 (RFC 9449 §4.2). */
export function athOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url')
}

/** What a proof is made for, and anything to change in it. */
export interface ProofInput {
  /** The request method (`htm`). */
  htm: string
  /** The request URL (`htu`). */
  htu: string
  /** The access token, whose hash becomes `ath`; leave out for a token request. */
  accessToken?: string
  /** Seconds since the epoch; default now. */
  iat?: number
  /** Default a random UUID. */
  jti?: string
  /** Claims to add, replace, or (with `undefined`) leave out. */
  claims?: Record<string, unknown>
  /** Header parameters to add or replace (`typ`, `jwk`, `alg`). */
  header?: Record<string, unknown>
  /** Sign with this key instead of the one whose jwk is in the header. */
  signWith?: KeyLike
}

/**
 * A DPoP proof JWT (RFC 9449 §4.2) signed with jose: `typ: dpop+jwt`, the key's public `jwk`,
 * `htm`, `htu`, `iat`, `jti` and `ath` when a token is given. Any claim or header parameter can
 * be changed for tests of the refusals.
 */
export async function createProof(key: DpopKey, input: ProofInput): Promise<string> {
  const payload: JWTPayload = {
    htm: input.htm,
    htu: input.htu,
    iat: input.iat ?? Math.floor(Date.now() / 1000),
    jti: input.jti ?? randomUUID(),
    ...(input.accessToken === undefined ? {} : { ath: athOf(input.accessToken) }),
  }
  for (const [name, value] of Object.entries(input.claims ?? {})) {
    if (value === undefined) delete payload[name]
    else payload[name] = value
  }
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...input.header })
    .sign(input.signWith ?? key.privateKey)
}

/** The claims of an access token bound to `jkt` (RFC 9449 §6.1). */
export function bound(payload: JWTPayload, jkt: string): JWTPayload {
  return { ...payload, cnf: { jkt } }
}

/** The headers of a request with a DPoP-bound token and its proof. */
export function dpopHeaders(token: string, proof: string): Record<string, string> {
  return { authorization: `DPoP ${token}`, dpop: proof }
}

/**
 * Calls `url` as a DPoP client does: `Authorization: DPoP <token>` and a fresh proof of `key`
 * for this method and URL. For tests against any server, the real issuer's tokens included.
 */
export async function callWithDpop(
  url: string,
  token: string,
  key: DpopKey,
  method = 'GET',
): Promise<Received> {
  const proof = await createProof(key, { htm: method, htu: url, accessToken: token })
  return send(method, url, dpopHeaders(token, proof))
}
