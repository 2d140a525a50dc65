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

/**
 * The checks of a port's methods, by method name. A check throws a TypeError for a misuse; it
 * may return the arguments to pass on instead of those given (a normalized copy).
 */
type PortChecks<P> = {
  [M in keyof P]?: P[M] extends ((...args: infer A) => unknown) | undefined
    ? (...args: A) => A | void
    : never
}

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
  return {
    keys: checkPort(
      adapter.keys,
      {
        listKeysOfTenants: (tenants) => checkTenantNames('listKeysOfTenants', tenants),
        keyChangesSince: (cursor) => checkCursor('keyChangesSince', cursor),
      },
      refuse,
    ),
    algorithms: checkPort(
      adapter.algorithms,
      {
        listTenantAlgorithms: (tenants) => checkTenantNames('listTenantAlgorithms', tenants),
        insertTenantAlgorithmIfAbsent: (record) =>
          checkTenantAlgorithm('insertTenantAlgorithmIfAbsent', record),
        replaceTenantAlgorithm: (expected, next) => {
          checkTenantAlgorithm('replaceTenantAlgorithm', expected)
          checkTenantAlgorithm('replaceTenantAlgorithm', next)
        },
      },
      refuse,
    ),
    throttle: checkPort(
      adapter.throttle,
      {
        reserveAttempts: (keys, terms) => checkReservation('reserveAttempts', keys, terms),
        settleAttempts: (settlement, window) =>
          checkSettlement('settleAttempts', settlement, window),
      },
      refuse,
    ),
    clientAuthFailures: checkPort(
      adapter.clientAuthFailures,
      {
        failures: (keys, now) => {
          checkFailureKeys('failures', keys)
          checkTime('failures', 'now', now)
        },
        recordFailure: (keys, window) => checkFailureRecord(keys, window),
      },
      refuse,
    ),
    codes: checkPort(
      adapter.codes,
      {
        saveCode: (code, options) => {
          checkCode('saveCode', code)
          codesToKeep(code, options)
        },
        redeemCode: (tenant, _codeHash, now, issue) => checkRedeemArgs(tenant, now, issue),
      },
      refuse,
    ),
    refreshTokens: checkPort(
      adapter.refreshTokens,
      {
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
      refuse,
    ),
    marks: checkPort(
      adapter.marks,
      {
        mark: (tenant, kind, id, expiresAt, now) => {
          checkMarkArgs('mark', tenant, kind, id, now)
          checkTime('mark', 'expiresAt', expiresAt)
        },
        isMarked: (tenant, kind, id, now) => checkMarkArgs('isMarked', tenant, kind, id, now),
      },
      refuse,
    ),
    secrets: checkPort(
      adapter.secrets,
      { getOrCreateSecret: (name, candidate) => checkSecretArgs(name, candidate) },
      refuse,
    ),
    sessions: checkPort(
      adapter.sessions,
      {
        createSession: (session, replaces) => checkSession(session, replaces),
        endSession: (tenant, sid, now) => checkEndSessionArgs(tenant, sid, now),
      },
      refuse,
    ),
    expiry: checkPort(
      adapter.expiry,
      { purgeExpired: (now) => checkTime('purgeExpired', 'now', now) },
      refuse,
    ),
    // The adapter gets the entries and keys as checked: copied (a getter answers once), each
    // entry's key once, sorted.
    parsedConfig: checkPort(
      adapter.parsedConfig,
      {
        add: (entries, now) => [parsedConfigToAdd(entries, now), now],
        prune: (keep, before) => [new Set(parsedConfigToKeep(keep, before)), before],
      },
      refuse,
    ),
    ping: () => adapter.ping(),
    close: () => {
      closing = true
      return adapter.close()
    },
  }
}
