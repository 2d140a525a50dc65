import { createHmac, sign } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import { exportJWK, generateKeyPair } from 'jose'
import type { JWK, JWTPayload, KeyLike } from 'jose'

export const SECRET = 'verifier-test-secret-0123456789-abcdef'

export interface TestKey {
  kid: string
  privateKey: KeyLike
  publicKey: KeyLike
  jwk: JWK
}

/** A fresh 2048-bit RS256 key pair and its public JWK, as a Tessera issuer publishes it. */
export async function createTestKey(kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  return { kid, privateKey, publicKey, jwk }
}

/** The public key as SPKI PEM, the form an attacker would try as an HMAC secret. */
export function publicPem(key: TestKey): string {
  return (key.publicKey as KeyObject).export({ type: 'spki', format: 'pem' }).toString()
}

/** Claims valid for an hour from `nowSeconds`. */
export function claims(iss: string, nowSeconds: number, extra: JWTPayload = {}): JWTPayload {
  return {
    iss,
    sub: 'user-1',
    aud: 'https://api.test',
    iat: nowSeconds,
    exp: nowSeconds + 3600,
    jti: `jti-${Math.random()}`,
    client_id: '11111111-1111-4111-8111-111111111111',
    scope: 'read write',
    ...extra,
  }
}

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * An RS256 token signed with `key`, `kid` in the header unless overridden. Signed by hand, so
 * that any header, even one jose would refuse to produce, can be tested.
 */
export function signRs256(
  key: TestKey,
  payload: JWTPayload,
  header: Record<string, unknown> = {},
): Promise<string> {
  const input = `${segment({ alg: 'RS256', typ: 'JWT', kid: key.kid, ...header })}.${segment(payload)}`
  const signature = sign('sha256', Buffer.from(input), key.privateKey as KeyObject)
  return Promise.resolve(`${input}.${signature.toString('base64url')}`)
}

/** An HS256 token signed with `secret` (default: the test secret), by hand like {@link signRs256}. */
export function signHs256(
  payload: JWTPayload,
  secret: string | Uint8Array = SECRET,
  header: Record<string, unknown> = {},
): Promise<string> {
  const input = `${segment({ alg: 'HS256', typ: 'JWT', ...header })}.${segment(payload)}`
  const mac = createHmac('sha256', secret).update(input).digest('base64url')
  return Promise.resolve(`${input}.${mac}`)
}

/** A token assembled by hand: any header, any payload, any signature. */
export function rawToken(header: unknown, payload: unknown, signature = 'c2lnbmF0dXJl'): string {
  const encode = (value: unknown) =>
    Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
  return `${encode(header)}.${encode(payload)}.${signature}`
}
