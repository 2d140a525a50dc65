import type { Store } from '../store.js'
import { codesToKeep } from './code-bound.js'
import {
  checkCode,
  checkCursor,
  checkEndSessionArgs,
  checkFailureKeys,
  checkFailureRecord,
  checkMarkArgs,
  checkRedeemArgs,
  checkReservation,
  checkSecretArgs,
  checkSession,
  checkSettlement,
  checkTenantAlgorithm,
  checkTenantNames,
  checkText,
  checkTime,
  parsedConfigToAdd,
  parsedConfigToKeep,
} from './checks.js'
import { checkConsent, checkMax, checkRegistration, lookupKeys } from './dynamic-checks.js'

/**
 * The checks of a port's methods, by method name. A check throws a TypeError for a misuse; it
 * may return the arguments to pass on instead of those given (a normalized copy).
 */
type PortChecks<P> = {
  [M in keyof P]?: P[M] extends ((...args: infer A) => unknown) | undefined
    ? (...args: A) => A | void
    : never
}

/** The ports of a store: all of it but its lifecycle. */
type Ports = Omit<Store, 'ping' | 'close'>

type Method = (...args: unknown[]) => Promise<unknown>

/** `port` with each method of `checks` checking its arguments before the adapter runs. */
function checkPort<P extends object>(
  port: P,
  checks: PortChecks<P>,
  refuse: (error: unknown) => Promise<never>,
): P {
  const checked: Record<string, unknown> = { ...(port as Record<string, unknown>) }
  for (const [name, check] of Object.entries(checks) as [
    string,
    (...args: unknown[]) => unknown,
  ][]) {
    const method = (port as Record<string, unknown>)[name]
    // An optional method the adapter lacks stays absent.
    if (typeof method !== 'function') continue
    checked[name] = (...given: unknown[]): Promise<unknown> => {
      let args = given
      try {
        args = (check(...given) as unknown[] | undefined) ?? given
      } catch (error) {
        return refuse(error)
      }
      return (method as Method).apply(port, args)
    }
  }
  return checked as P
}

/** The checks of every port, by port name. */
const CHECKS: { [P in keyof Ports]: PortChecks<Ports[P]> } = {
  keys: {
    listKeysOfTenants: (tenants) => checkTenantNames('listKeysOfTenants', tenants),
    keyChangesSince: (cursor) => checkCursor('keyChangesSince', cursor),
  },
  algorithms: {
    listTenantAlgorithms: (tenants) => checkTenantNames('listTenantAlgorithms', tenants),
    insertTenantAlgorithmIfAbsent: (record) =>
      checkTenantAlgorithm('insertTenantAlgorithmIfAbsent', record),
    replaceTenantAlgorithm: (expected, next) => {
      checkTenantAlgorithm('replaceTenantAlgorithm', expected)
      checkTenantAlgorithm('replaceTenantAlgorithm', next)
    },
  },
  throttle: {
    reserveAttempts: (keys, terms) => checkReservation('reserveAttempts', keys, terms),
    settleAttempts: (settlement, window) => checkSettlement('settleAttempts', settlement, window),
  },
  clientAuthFailures: {
    failures: (keys, now) => {
      checkFailureKeys('failures', keys)
      checkTime('failures', 'now', now)
    },
    recordFailure: (keys, window) => checkFailureRecord(keys, window),
  },
  codes: {
    saveCode: (code, options) => {
      checkCode('saveCode', code)
      codesToKeep(code, options)
    },
    redeemCode: (tenant, _codeHash, now, issue) => checkRedeemArgs(tenant, now, issue),
  },
  refreshTokens: {
    rotateRefreshToken: (_tenant, _oldHash, newHash, now) => {
      checkTime('rotateRefreshToken', 'now', now)
      checkText('rotateRefreshToken', 'newHash', newHash)
    },
    rotateRefreshTokenForClient: (_tenant, _clientId, _oldHash, newHash, now) => {
      checkTime('rotateRefreshTokenForClient', 'now', now)
      checkText('rotateRefreshTokenForClient', 'newHash', newHash)
    },
    revokeFamily: (_tenant, _familyId, now) => checkTime('revokeFamily', 'now', now),
    revokeFamiliesByCode: (_tenant, _codeHash, now) =>
      checkTime('revokeFamiliesByCode', 'now', now),
  },
  marks: {
    mark: (tenant, kind, id, expiresAt, now) => {
      checkMarkArgs('mark', tenant, kind, id, now)
      checkTime('mark', 'expiresAt', expiresAt)
    },
    isMarked: (tenant, kind, id, now) => checkMarkArgs('isMarked', tenant, kind, id, now),
  },
  secrets: { getOrCreateSecret: (name, candidate) => checkSecretArgs(name, candidate) },
  sessions: {
    createSession: (session, replaces) => checkSession(session, replaces),
    endSession: (tenant, sid, now) => checkEndSessionArgs(tenant, sid, now),
  },
  clientRegistrations: {
    registerClient: (record, max) => {
      checkRegistration('registerClient', record)
      checkMax(max)
    },
    findRegisteredClient: (tenant, clientId) =>
      lookupKeys('findRegisteredClient', ['tenant', 'clientId'], [tenant, clientId]),
    updateRegisteredClient: (record) => checkRegistration('updateRegisteredClient', record),
    deleteRegisteredClient: (tenant, clientId) =>
      lookupKeys('deleteRegisteredClient', ['tenant', 'clientId'], [tenant, clientId]),
  },
  consents: {
    saveConsent: (consent) => checkConsent(consent),
    findConsent: (tenant, subject, clientId, resources, now) => {
      checkTime('findConsent', 'now', now)
      const keys = lookupKeys(
        'findConsent',
        ['tenant', 'subject', 'clientId', 'resources'],
        [tenant, subject, clientId, resources],
      )
      return [...keys, now] as [string, string, string, string, number]
    },
    deleteConsents: (tenant, clientId) =>
      lookupKeys('deleteConsents', ['tenant', 'clientId'], [tenant, clientId]),
  },
  expiry: { purgeExpired: (now) => checkTime('purgeExpired', 'now', now) },
  // The adapter gets the entries and keys as checked: copied (a getter answers once), each
  // entry's key once, sorted.
  parsedConfig: {
    add: (entries, now) => [parsedConfigToAdd(entries, now), now],
    prune: (keep, before) => [new Set(parsedConfigToKeep(keep, before)), before],
  },
}

/**
 * Wraps an adapter so that every port method checks its arguments, the same way for every
 * adapter, before the adapter sees them: a misuse rejects with a TypeError naming the method and
 * the argument, and nothing is read or written.
 *
 * Whether the store is open stays the adapter's to say (each closes at its own moment: an SQLite
 * store answers its queued writes first), and a closed store refuses any use with
 * `ERR_STORE_CLOSED`, whatever the arguments. So once `close()` is called, a misuse asks the
 * adapter's `ping`, which refuses with that error when the adapter is closed and touches no
 * record.
 */
export function checkedStore(adapter: Store): Store {
  let closing = false
  const refuse = async (error: unknown): Promise<never> => {
    if (closing) await adapter.ping()
    throw error
  }
  const port = <P extends keyof Ports>(name: P): Ports[P] =>
    checkPort(adapter[name], CHECKS[name], refuse)
  return {
    keys: port('keys'),
    algorithms: port('algorithms'),
    throttle: port('throttle'),
    clientAuthFailures: port('clientAuthFailures'),
    codes: port('codes'),
    refreshTokens: port('refreshTokens'),
    marks: port('marks'),
    secrets: port('secrets'),
    sessions: port('sessions'),
    clientRegistrations: port('clientRegistrations'),
    consents: port('consents'),
    expiry: port('expiry'),
    parsedConfig: port('parsedConfig'),
    ping: () => adapter.ping(),
    close: () => {
      closing = true
      return adapter.close()
    },
  }
}
