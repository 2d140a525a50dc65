import type { ConsentRecord, RegisteredClientRecord } from '@tessera/grants'
import { checkText, checkTime } from './checks.js'

// The argument checks of the registration and consent ports, shared by every adapter (see
// checkedStore). Every string these ports store refuses U+0000, on every adapter alike: a
// PostgreSQL TEXT value cannot hold it.

/** Longest tenant name, subject or client_id: room for a metadata document's https URL. */
const KEY_MAX = 2048
/** Longest `resources` of a consent: several resource URIs. */
const RESOURCES_MAX = 8192
/** Longest registered metadata, as JSON text: room for an inline `jwks`. */
export const METADATA_MAX = 65_536
const SHA256_HEX = /^[0-9a-f]{64}$/
/** A scope token (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/** Whether `value` is a string these ports can store as a key: 1 to `max` code units, no U+0000. */
function isStorableKey(value: string, max = KEY_MAX): boolean {
  return (
    value.length >= 1 &&
    value.length <= max &&
    !value.includes('\u0000') &&
    // In a `u` regex a surrogate pair is one code point: this matches lone surrogates only.
    !/\p{Surrogate}/u.test(value)
  )
}

function checkKey(method: string, name: string, value: string): void {
  checkText(method, name, value)
  if (!isStorableKey(value)) {
    throw new TypeError(`${method}: ${name} must be 1 to ${KEY_MAX} characters without U+0000`)
  }
}

function checkString(method: string, name: string, value: unknown): void {
  if (typeof value !== 'string') throw new TypeError(`${method}: ${name} must be a string`)
}

function checkHash(method: string, name: string, value: string): void {
  if (typeof value !== 'string' || !SHA256_HEX.test(value)) {
    throw new TypeError(`${method}: ${name} must be a SHA-256 digest in lower-case hex`)
  }
}

function checkMetadata(method: string, metadata: Record<string, unknown>): void {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new TypeError(`${method}: metadata must be an object`)
  }
  let json: string
  try {
    json = JSON.stringify(metadata)
  } catch {
    throw new TypeError(`${method}: metadata must be JSON`)
  }
  if (json.length > METADATA_MAX) {
    throw new TypeError(`${method}: metadata must be at most ${METADATA_MAX} characters of JSON`)
  }
}

/** A registration as `registerClient` and `updateRegisteredClient` take it. */
export function checkRegistration(method: string, record: RegisteredClientRecord): void {
  if (typeof record !== 'object' || record === null) {
    throw new TypeError(`${method}: record must be an object`)
  }
  checkKey(method, 'tenant', record.tenant)
  checkKey(method, 'clientId', record.clientId)
  if (record.secretHash !== undefined) checkHash(method, 'secretHash', record.secretHash)
  checkHash(method, 'registrationTokenHash', record.registrationTokenHash)
  checkMetadata(method, record.metadata)
  checkTime(method, 'createdAt', record.createdAt)
  checkTime(method, 'updatedAt', record.updatedAt)
}

/** The bound of `registerClient`: a positive integer, as `max_registrations` is. */
export function checkMax(max: number): void {
  if (!(Number.isSafeInteger(max) && max >= 1)) {
    throw new TypeError('registerClient: max must be a positive integer')
  }
}

/**
 * The keys of a lookup (find, delete), which may come from a request: a string that no row can
 * hold (empty, too long, U+0000, a lone surrogate) finds nothing, so every key of the lookup is
 * replaced by `''`, which no stored row has, and the adapter answers "none" as for any unknown
 * key (a closed store still refuses). Anything but strings is a misuse: a TypeError.
 */
export function lookupKeys<K extends string[]>(method: string, names: string[], keys: [...K]): K {
  keys.forEach((key, i) => {
    checkString(method, names[i] ?? 'key', key)
  })
  const storable = keys.every((key, i) =>
    names[i] === 'resources' ? isStorableResources(key) : isStorableKey(key),
  )
  return storable ? keys : (keys.map(() => '') as K)
}

function isStorableResources(value: string): boolean {
  return value === '' || isStorableKey(value, RESOURCES_MAX)
}

/** A consent as `saveConsent` takes it. */
export function checkConsent(consent: ConsentRecord): void {
  const method = 'saveConsent'
  if (typeof consent !== 'object' || consent === null) {
    throw new TypeError(`${method}: consent must be an object`)
  }
  checkKey(method, 'tenant', consent.tenant)
  checkKey(method, 'subject', consent.subject)
  checkKey(method, 'clientId', consent.clientId)
  checkText(method, 'resources', consent.resources)
  if (!isStorableResources(consent.resources)) {
    throw new TypeError(
      `${method}: resources must be at most ${RESOURCES_MAX} characters without U+0000`,
    )
  }
  const scopes: unknown = consent.scopes
  if (
    !Array.isArray(scopes) ||
    !scopes.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))
  ) {
    throw new TypeError(`${method}: scopes must be an array of scope tokens`)
  }
  checkTime(method, 'expiresAt', consent.expiresAt)
}
