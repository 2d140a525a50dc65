import type {
  AuthorizationCodeRecord,
  FailureLimit,
  FamilyIssue,
  RefreshFamily,
  SessionRecord,
  Settlement,
  ReservationTerms,
  ThrottleLimit,
  ThrottleWindow,
} from '@tessera/grants'
import type { TenantAlgorithmRecord } from '@tessera/keys'
import { StoreError } from '../errors.js'
import type { ParsedConfigEntry } from '../parsed-config.js'

/**
 * The arguments of `reserveAttempts`: at least one key, no key twice (one attempt per key), each
 * a well-formed string with a positive integer limit; integer epoch milliseconds and a positive
 * integer lease. Argument checks are shared by the adapters, so that all refuse the same misuse
 * the same way.
 */
export function checkReservation(
  method: string,
  keys: readonly ThrottleLimit[],
  terms: ReservationTerms,
): void {
  checkTime(method, 'now', terms.now)
  if (!(Number.isSafeInteger(terms.leaseMs) && terms.leaseMs > 0)) {
    throw new TypeError(`${method}: leaseMs must be a positive integer number of milliseconds`)
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new TypeError(`${method}: keys must be a non-empty array`)
  }
  const asked: readonly ThrottleLimit[] = keys
  const seen = new Set<string>()
  for (const { key, limit } of asked) {
    // Well-formed, so that two distinct keys are two distinct rows (see checkText).
    checkText(method, 'key', key)
    if (seen.has(key)) throw new TypeError(`${method}: keys must be distinct`)
    seen.add(key)
    if (!(Number.isSafeInteger(limit) && limit > 0)) {
      throw new TypeError(`${method}: limit must be a positive integer`)
    }
  }
}

/**
 * The arguments of `settleAttempts`: a hold, well-formed distinct keys, no key both failed and
 * cleared, integer epoch milliseconds and a positive integer window.
 */
export function checkSettlement(
  method: string,
  settlement: Settlement,
  window: ThrottleWindow,
): void {
  checkTime(method, 'now', window.now)
  if (!(Number.isSafeInteger(window.windowMs) && window.windowMs > 0)) {
    throw new TypeError(`${method}: windowMs must be a positive integer number of milliseconds`)
  }
  checkText(method, 'hold', settlement.hold)
  if (!Array.isArray(settlement.fail) || !Array.isArray(settlement.clear)) {
    throw new TypeError(`${method}: fail and clear must be arrays`)
  }
  const fail: readonly string[] = settlement.fail
  const clear: readonly string[] = settlement.clear
  // One failure per key: a key failed twice would be one increment on one adapter and two on
  // another.
  const seen = new Set<string>()
  for (const key of [...fail, ...clear]) {
    checkText(method, 'key', key)
    if (seen.has(key)) throw new TypeError(`${method}: fail and clear keys must be distinct`)
    seen.add(key)
  }
}

// In a `u` regex a surrogate pair is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /\p{Surrogate}/u

/**
 * A time that is stored or compared: integer epoch milliseconds, the only kind of number an
 * INTEGER column of a STRICT table accepts.
 */
export function checkTime(method: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value)) {
    throw new TypeError(`${method}: ${name} must be integer epoch milliseconds`)
  }
}

function checkOptionalTime(method: string, name: string, value: number | undefined): void {
  if (value !== undefined) checkTime(method, name, value)
}

/**
 * A string that is stored. SQLite keeps text as UTF-8, which cannot hold a lone UTF-16
 * surrogate: it would silently store U+FFFD instead. Both adapters refuse such a string rather
 * than give back something other than what they were given. Every other string, including the
 * empty one, is stored byte for byte.
 */
export function checkText(method: string, name: string, value: string | undefined): void {
  if (typeof value !== 'string' || LONE_SURROGATE.test(value)) {
    throw new TypeError(`${method}: ${name} must be a string of well-formed Unicode`)
  }
}

function checkOptionalText(method: string, name: string, value: string | undefined): void {
  if (value !== undefined) checkText(method, name, value)
}

function checkClaims(method: string, name: string, value: Record<string, unknown>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${method}: ${name} must be an object`)
  }
}

/**
 * Resource URIs: a non-empty list of non-empty strings without whitespace, which the tables keep
 * space-separated.
 */
function checkOptionalResources(method: string, name: string, value: unknown): void {
  if (value === undefined) return
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((uri) => typeof uri === 'string' && uri !== '' && !/\s/.test(uri))
  ) {
    throw new TypeError(`${method}: ${name} must be a non-empty list of URIs without whitespace`)
  }
}

/** An RFC 7638 SHA-256 JWK thumbprint: 32 bytes, base64url (43 characters). */
function checkOptionalThumbprint(method: string, name: string, value: unknown): void {
  if (value === undefined) return
  if (typeof value !== 'string' || !/^[\w-]{43}$/.test(value)) {
    throw new TypeError(`${method}: ${name} must be a base64url SHA-256 JWK thumbprint`)
  }
}

export function checkCode(method: string, code: AuthorizationCodeRecord): void {
  checkText(method, 'codeHash', code.codeHash)
  checkText(method, 'tenant', code.tenant)
  checkText(method, 'clientId', code.clientId)
  checkText(method, 'redirectUri', code.redirectUri)
  checkOptionalText(method, 'codeChallenge', code.codeChallenge)
  checkText(method, 'scope', code.scope)
  checkText(method, 'sub', code.sub)
  checkClaims(method, 'claims', code.claims)
  checkTime(method, 'createdAt', code.createdAt)
  checkTime(method, 'expiresAt', code.expiresAt)
  checkOptionalTime(method, 'consumedAt', code.consumedAt)
  checkOptionalText(method, 'nonce', code.nonce)
  checkOptionalText(method, 'sid', code.sid)
  checkOptionalTime(method, 'authTime', code.authTime)
  checkOptionalResources(method, 'resources', code.resources)
  checkOptionalThumbprint(method, 'dpopJkt', code.dpopJkt)
}

function checkFamily(method: string, family: RefreshFamily): void {
  checkText(method, 'family.familyId', family.familyId)
  checkText(method, 'family.tenant', family.tenant)
  checkText(method, 'family.clientId', family.clientId)
  checkText(method, 'family.sub', family.sub)
  checkText(method, 'family.scope', family.scope)
  checkClaims(method, 'family.claims', family.claims)
  checkOptionalText(method, 'family.codeHash', family.codeHash)
  checkTime(method, 'family.createdAt', family.createdAt)
  checkTime(method, 'family.expiresAt', family.expiresAt)
  checkOptionalTime(method, 'family.revokedAt', family.revokedAt)
  checkOptionalText(method, 'family.sid', family.sid)
  checkOptionalTime(method, 'family.authTime', family.authTime)
  checkOptionalResources(method, 'family.resources', family.resources)
  checkOptionalThumbprint(method, 'family.dpopJkt', family.dpopJkt)
}

/** The arguments of `redeemCode`; a family must belong to the tenant of the code it comes from. */
export function checkRedeemArgs(tenant: string, now: number, issue: FamilyIssue | undefined): void {
  const method = 'redeemCode'
  checkTime(method, 'now', now)
  if (issue === undefined) return
  checkFamily(method, issue.family)
  checkOptionalText(method, 'tokenHash', issue.tokenHash)
  if (issue.family.tenant !== tenant) {
    throw new TypeError(`${method}: issue.family.tenant must be the tenant of the code`)
  }
}

/** The arguments of `createSession`: the record, and the idHash it replaces, if any. */
export function checkSession(session: SessionRecord, replaces: string | undefined): void {
  const method = 'createSession'
  if (typeof session !== 'object' || session === null) {
    throw new TypeError(`${method}: session must be an object`)
  }
  checkText(method, 'idHash', session.idHash)
  checkText(method, 'tenant', session.tenant)
  checkText(method, 'sid', session.sid)
  checkText(method, 'sub', session.sub)
  checkClaims(method, 'claims', session.claims)
  checkTime(method, 'authTime', session.authTime)
  checkTime(method, 'createdAt', session.createdAt)
  checkTime(method, 'expiresAt', session.expiresAt)
  checkOptionalTime(method, 'endedAt', session.endedAt)
  checkOptionalText(method, 'replaces', replaces)
}

/** The arguments of `endSession`. */
export function checkEndSessionArgs(tenant: string, sid: string, now: number): void {
  const method = 'endSession'
  checkText(method, 'tenant', tenant)
  checkText(method, 'sid', sid)
  checkTime(method, 'now', now)
}

/** The error for a save whose primary key is taken; `what` names the record, never its key. */
export function conflictError(what: string, cause?: unknown): StoreError {
  return new StoreError(
    'ERR_STORE_CONFLICT',
    `${what} already exists in this tenant`,
    cause === undefined ? undefined : { cause },
  )
}

/** A string of `min` to `max` UTF-16 code units that {@link checkText} accepts. */
function checkBoundedText(method: string, name: string, value: string, max: number): void {
  checkText(method, name, value)
  if (value.length < 1 || value.length > max) {
    throw new TypeError(`${method}: ${name} must be 1 to ${max} characters`)
  }
}

/** Longest kind of mark: a constant of the caller's, such as `login-form`. */
const MARK_KIND_MAX = 32
/** Longest mark id: room for a client's jti, which the client chooses. */
const MARK_ID_MAX = 512

/** The arguments that `mark` and `isMarked` share; `mark` checks its `expiresAt` too. */
export function checkMarkArgs(
  method: string,
  tenant: string,
  kind: string,
  id: string,
  now: number,
): void {
  checkText(method, 'tenant', tenant)
  checkBoundedText(method, 'kind', kind, MARK_KIND_MAX)
  // A kind is the caller's constant, stored as text; only the id may come from a client.
  if (kind.includes('\u0000')) throw new TypeError(`${method}: kind must not contain U+0000`)
  checkBoundedText(method, 'id', id, MARK_ID_MAX)
  checkTime(method, 'now', now)
}

const SECRET_NAME_MAX = 128
const SECRET_VALUE_MAX = 16_384

/**
 * The arguments of `getOrCreateSecret`. U+0000 is refused in both, by every adapter alike: a
 * PostgreSQL TEXT value cannot hold it, and no random secret worth storing needs it.
 */
export function checkSecretArgs(name: string, candidate: string): void {
  const method = 'getOrCreateSecret'
  checkBoundedText(method, 'name', name, SECRET_NAME_MAX)
  checkBoundedText(method, 'candidate', candidate, SECRET_VALUE_MAX)
  if (name.includes('\u0000') || candidate.includes('\u0000')) {
    throw new TypeError(`${method}: name and candidate must not contain U+0000`)
  }
}

/** The tenant names of `listKeysOfTenants`: an array of strings. */
export function checkTenantNames(method: string, tenants: readonly string[]): void {
  if (!Array.isArray(tenants) || tenants.some((tenant) => typeof tenant !== 'string')) {
    throw new TypeError(`${method}: tenants must be an array of strings`)
  }
}

/** A tenant's signing-algorithm record, as `insertTenantAlgorithmIfAbsent` and `replace…` take. */
export function checkTenantAlgorithm(method: string, record: TenantAlgorithmRecord): void {
  const ok =
    typeof record === 'object' &&
    record !== null &&
    typeof record.tenant === 'string' &&
    record.tenant !== '' &&
    (record.algorithm === 'HS256' || record.algorithm === 'RS256') &&
    Number.isSafeInteger(record.since) &&
    typeof record.hs256Before === 'boolean'
  if (!ok) throw new TypeError(`${method}: not a tenant algorithm record`)
}

/**
 * The keys of a failure counter: a non-empty array of distinct well-formed strings. Keys are the
 * grants' hashes, so each is a short ASCII string.
 */
export function checkFailureKeys(method: string, given: readonly string[]): void {
  if (!Array.isArray(given) || given.length === 0) {
    throw new TypeError(`${method}: keys must be a non-empty array`)
  }
  // Array.isArray narrows to any[]; the elements are checked one by one below.
  const keys: readonly string[] = given
  for (const key of keys) checkText(method, 'key', key)
  if (new Set(keys).size !== keys.length) throw new TypeError(`${method}: keys must be distinct`)
}

/** The arguments of `recordFailure`: keys as {@link checkFailureKeys}, positive integer limits. */
export function checkFailureRecord(given: readonly FailureLimit[], window: ThrottleWindow): void {
  checkTime('recordFailure', 'now', window.now)
  if (!(Number.isSafeInteger(window.windowMs) && window.windowMs > 0)) {
    throw new TypeError('recordFailure: windowMs must be a positive integer number of milliseconds')
  }
  if (!Array.isArray(given)) throw new TypeError('recordFailure: keys must be a non-empty array')
  const keys: readonly FailureLimit[] = given
  checkFailureKeys(
    'recordFailure',
    keys.map(({ key }) => key),
  )
  for (const { limit } of keys) {
    if (!(Number.isSafeInteger(limit) && limit > 0)) {
      throw new TypeError('recordFailure: limit must be a positive integer')
    }
  }
}

/** A key change cursor: what keyChangeCursor or keyChangesSince answered, a safe integer ≥ 0. */
export function checkCursor(method: string, cursor: number): void {
  if (!(Number.isSafeInteger(cursor) && cursor >= 0)) {
    throw new TypeError(`${method}: cursor must be a non-negative integer`)
  }
}

/** A parsed-config key: what the issuer computes, a SHA-256 digest in lowercase hex. */
const PARSED_CONFIG_KEY = /^[0-9a-f]{64}$/
/** Longest parsed-config value, in UTF-16 code units: a sealed parse result is a few KB. */
export const PARSED_CONFIG_VALUE_MAX = 1_048_576

/** A time stored as `stored_at` or compared with it: integer epoch milliseconds, not before 1970. */
function checkStamp(method: string, name: string, value: number): void {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new TypeError(`${method}: ${name} must be a non-negative integer of epoch milliseconds`)
  }
}

function checkParsedConfigKey(method: string, name: string, key: unknown): asserts key is string {
  if (typeof key !== 'string' || !PARSED_CONFIG_KEY.test(key)) {
    throw new TypeError(`${method}: ${name} must be a SHA-256 digest in lowercase hex`)
  }
}

/**
 * The arguments of `parsedConfig.add`, checked whole before anything is written, and the entries
 * to insert: copied (a getter answers once), each key once (the first entry of a key wins, as
 * it would were they added one by one), sorted by key. Every adapter writes them in that order,
 * so that two replicas adding the same keys at once take their row locks in one order and never
 * deadlock. A value refuses U+0000, which a PostgreSQL TEXT value cannot hold, on every adapter.
 */
export function parsedConfigToAdd(
  entries: readonly ParsedConfigEntry[],
  now: number,
): ParsedConfigEntry[] {
  const method = 'parsedConfig.add'
  checkStamp(method, 'now', now)
  if (!Array.isArray(entries)) throw new TypeError(`${method}: entries must be an array`)
  const asked: readonly unknown[] = entries
  const byKey = new Map<string, string>()
  for (const entry of asked) {
    if (typeof entry !== 'object' || entry === null) {
      throw new TypeError(`${method}: each entry must be an object`)
    }
    const { key, value } = entry as { key: unknown; value: unknown }
    checkParsedConfigKey(method, 'key', key)
    if (typeof value !== 'string' || value.length > PARSED_CONFIG_VALUE_MAX) {
      throw new TypeError(
        `${method}: value must be a string of at most ${PARSED_CONFIG_VALUE_MAX} characters`,
      )
    }
    checkText(method, 'value', value)
    if (value.includes('\u0000')) throw new TypeError(`${method}: value must not contain U+0000`)
    if (!byKey.has(key)) byKey.set(key, value)
  }
  return [...byKey.keys()].sort().map((key) => ({ key, value: byKey.get(key) ?? '' }))
}

/** The arguments of `parsedConfig.prune`, and the keys to keep as an array. */
export function parsedConfigToKeep(keep: ReadonlySet<string>, before: number): string[] {
  const method = 'parsedConfig.prune'
  checkStamp(method, 'before', before)
  const candidate = keep as unknown
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof (candidate as { has?: unknown }).has !== 'function' ||
    typeof (candidate as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new TypeError(`${method}: keep must be a Set of keys`)
  }
  const keys = [...keep]
  for (const key of keys) checkParsedConfigKey(method, 'each key to keep', key)
  return keys
}
