import { exportJWK, generateKeyPair } from 'jose'
import type { StoredKey } from './ports.js'

/**
 * Generates a 2048-bit RSA key pair for RS256, ready for {@link KeyStore.insertKeyIfAbsent}.
 *
 * `publicJwk` holds only `kty, n, e`; `privateKey` holds the private JWK. The key is `active`.
 *
 * @param tenant - tenant name
 * @param kid - key id, normally {@link kidForDate} of `now`
 * @param now - epoch milliseconds, recorded as `createdAt`
 * @see RFC 7518 §6.3 (RSA JWK parameters)
 * @example
 * ```ts
 * const key = await generateRsaKey('acme', kidForDate(Date.now()), Date.now())
 * await store.insertKeyIfAbsent(key)
 * ```
 */
export async function generateRsaKey(tenant: string, kid: string, now: number): Promise<StoredKey> {
  if (typeof tenant !== 'string' || tenant === '') {
    throw new TypeError('generateRsaKey: tenant must be a non-empty string')
  }
  if (typeof kid !== 'string' || kid === '') {
    throw new TypeError('generateRsaKey: kid must be a non-empty string')
  }
  if (!Number.isFinite(now)) throw new TypeError('generateRsaKey: now must be epoch milliseconds')

  // extractable: the private half must leave WebCrypto once, to be persisted in the store.
  const { publicKey, privateKey } = await generateKeyPair('RS256', {
    modulusLength: 2048,
    extractable: true,
  })
  const pub = await exportJWK(publicKey)
  const priv = await exportJWK(privateKey)
  return {
    tenant,
    kid,
    alg: 'RS256',
    publicJwk: JSON.stringify({ kty: pub.kty, n: pub.n, e: pub.e }),
    privateKey: JSON.stringify({
      kty: priv.kty,
      n: priv.n,
      e: priv.e,
      d: priv.d,
      p: priv.p,
      q: priv.q,
      dp: priv.dp,
      dq: priv.dq,
      qi: priv.qi,
    }),
    createdAt: now,
    state: 'active',
  }
}
