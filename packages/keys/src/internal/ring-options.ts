import type { LoadKeyRingOptions } from '../key-ring.js'

/** Refuses options of loadKeyRing that a caller got wrong, with a TypeError naming the field. */
export function checkOptions(options: LoadKeyRingOptions): void {
  const { tenant, algorithm, store, now, rotateOnRestart, graceMs, rotationMs, idTokens } = options
  if (typeof tenant !== 'string' || tenant === '') {
    throw new TypeError('loadKeyRing: options.tenant must be a non-empty string')
  }
  if (algorithm !== 'HS256' && algorithm !== 'RS256') {
    throw new TypeError('loadKeyRing: options.algorithm must be "HS256" or "RS256"')
  }
  if (typeof store !== 'object' || store === null) {
    throw new TypeError('loadKeyRing: options.store must be a KeyStore')
  }
  if (typeof now !== 'function') throw new TypeError('loadKeyRing: options.now must be a function')
  if (typeof rotateOnRestart !== 'boolean') {
    throw new TypeError('loadKeyRing: options.rotateOnRestart must be a boolean')
  }
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new TypeError(
      'loadKeyRing: options.graceMs must be a non-negative number of milliseconds',
    )
  }
  if (rotationMs !== undefined && !(Number.isFinite(rotationMs) && rotationMs > 0)) {
    throw new TypeError('loadKeyRing: options.rotationMs must be a positive number of milliseconds')
  }
  if (idTokens !== undefined && typeof idTokens !== 'boolean') {
    throw new TypeError('loadKeyRing: options.idTokens must be a boolean')
  }
  if (options.keys !== undefined && !Array.isArray(options.keys)) {
    throw new TypeError('loadKeyRing: options.keys must be an array of stored keys')
  }
  const { publishAheadMs } = options
  if (publishAheadMs !== undefined && !(Number.isFinite(publishAheadMs) && publishAheadMs >= 0)) {
    throw new TypeError('loadKeyRing: options.publishAheadMs must be a non-negative number')
  }
  for (const name of ['onEvent', 'generateKey'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new TypeError(`loadKeyRing: options.${name} must be a function`)
    }
  }
}
