import type {
  AuthorizationCodeRecord,
  AuthorizationCodeStore,
  ExpiryStore,
  MarkStore,
  RefreshFamily,
  RefreshTokenRecord,
  RefreshTokenStore,
  RotateResult,
  SecretStore,
  SessionRecord,
  SessionStore,
  ThrottleStore,
} from '@tessera/grants'
import type { KeyStore, StoredKey } from '@tessera/keys'
import { createMemoryFailureCounter } from './client-auth-failures.js'
import { StoreError } from './errors.js'
import type { ParsedConfigStore } from './parsed-config.js'
import type { Store } from './store.js'
import { checkedStore } from './internal/checked-store.js'
import { conflictError } from './internal/checks.js'
import { codesToDrop, codesToKeep } from './internal/code-bound.js'
import { CODE_RETENTION_MS, rotationStep } from './internal/lifecycle.js'
import { settle } from './internal/settle.js'
import { decideReservation } from './internal/throttle.js'
import { createMemoryTenantAlgorithms } from './internal/tenant-algorithms.js'

function copy(key: StoredKey): StoredKey {
  return { ...key }
}

// The copies below are built field by field, like a row read back from SQL: an optional field
// that is undefined is left out, and claims go through JSON as they would through a TEXT column.

function copyClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(claims)) as Record<string, unknown>
}

function copyCode(c: AuthorizationCodeRecord): AuthorizationCodeRecord {
  const code: AuthorizationCodeRecord = {
    codeHash: c.codeHash,
    tenant: c.tenant,
    clientId: c.clientId,
    redirectUri: c.redirectUri,
    scope: c.scope,
    sub: c.sub,
    claims: copyClaims(c.claims),
    createdAt: c.createdAt,
    expiresAt: c.expiresAt,
  }
  if (c.codeChallenge !== undefined) code.codeChallenge = c.codeChallenge
  if (c.consumedAt !== undefined) code.consumedAt = c.consumedAt
  if (c.nonce !== undefined) code.nonce = c.nonce
  if (c.sid !== undefined) code.sid = c.sid
  if (c.authTime !== undefined) code.authTime = c.authTime
  return code
}

function copyFamily(f: RefreshFamily): RefreshFamily {
  const family: RefreshFamily = {
    familyId: f.familyId,
    tenant: f.tenant,
    clientId: f.clientId,
    sub: f.sub,
    scope: f.scope,
    claims: copyClaims(f.claims),
    createdAt: f.createdAt,
    expiresAt: f.expiresAt,
  }
  if (f.codeHash !== undefined) family.codeHash = f.codeHash
  if (f.sid !== undefined) family.sid = f.sid
  if (f.authTime !== undefined) family.authTime = f.authTime
  if (f.revokedAt !== undefined) family.revokedAt = f.revokedAt
  return family
}

function copySession(s: SessionRecord): SessionRecord {
  const session: SessionRecord = {
    idHash: s.idHash,
    tenant: s.tenant,
    sid: s.sid,
    sub: s.sub,
    claims: copyClaims(s.claims),
    authTime: s.authTime,
    createdAt: s.createdAt,
    expiresAt: s.expiresAt,
  }
  if (s.endedAt !== undefined) session.endedAt = s.endedAt
  return session
}

function copyToken(t: RefreshTokenRecord): RefreshTokenRecord {
  const token: RefreshTokenRecord = {
    tokenHash: t.tokenHash,
    familyId: t.familyId,
    createdAt: t.createdAt,
  }
  if (t.spentAt !== undefined) token.spentAt = t.spentAt
  return token
}

/** Rows keyed by (tenant, id), as in a table whose primary key is that pair. */
class Table<T> {
  readonly #tenants = new Map<string, Map<string, T>>()

  get(tenant: string, id: string): T | undefined {
    return this.#tenants.get(tenant)?.get(id)
  }

  has(tenant: string, id: string): boolean {
    return this.#tenants.get(tenant)?.has(id) ?? false
  }

  set(tenant: string, id: string, row: T): void {
    const rows = this.#tenants.get(tenant) ?? new Map<string, T>()
    rows.set(id, row)
    this.#tenants.set(tenant, rows)
  }

  rows(tenant: string): IterableIterator<T> {
    return (this.#tenants.get(tenant) ?? new Map<string, T>()).values()
  }

  /** Deletes the rows `drop` selects and returns how many. */
  deleteWhere(drop: (row: T, tenant: string) => boolean): number {
    let deleted = 0
    for (const [tenant, rows] of this.#tenants) {
      for (const [id, row] of rows) {
        if (drop(row, tenant)) {
          rows.delete(id)
          deleted++
        }
      }
    }
    return deleted
  }

  clear(): void {
    this.#tenants.clear()
  }
}

/**
 * A store in process memory: the same contract as the SQLite adapter, nothing persisted and
 * nothing shared between processes. For tests and `memory:` only.
 *
 * @example
 * ```ts
 * const store = createMemoryStore()
 * const ring = await loadKeyRing({ tenant: 'acme', algorithm: 'RS256', store: store.keys, ... })
 * ```
 */
export function createMemoryStore(): Store {
  return checkedStore(createMemoryAdapter())
}

function createMemoryAdapter(): Store {
  const keys = new Map<string, Map<string, StoredKey>>()
  const prunedKids = new Map<string, Set<string>>()
  /** The key change feed: the number of each tenant's last key write, and the last number. */
  const keyChanges = new Map<string, number>()
  let keySeq = 0
  const keyChanged = (tenant: string): void => {
    keyChanges.set(tenant, ++keySeq)
  }
  const windows = new Map<string, { count: number; resetAt: number }>()
  /** Attempts in flight, by hold: the keys held and when the hold's lease runs out. */
  const holds = new Map<string, { keys: Set<string>; expiresAt: number }>()
  const codeRows = new Table<AuthorizationCodeRecord>()
  const familyRows = new Table<RefreshFamily>()
  const tokenRows = new Table<RefreshTokenRecord>()
  /** Expiry (epoch ms) of each mark, by tenant and then by the (kind, id) pair as JSON. */
  const markRows = new Table<number>()
  const sessionRows = new Table<SessionRecord>()
  const secretValues = new Map<string, string>()
  const parsedConfigRows = new Map<string, { value: string; storedAt: number }>()
  let closed = false

  function open(): void {
    if (closed) throw new StoreError('ERR_STORE_CLOSED', 'the memory store is closed')
  }

  // Each method runs synchronously to completion before another can start: that makes
  // insert-if-absent, the counters, redemption, rotation and takes atomic within the process.
  // Whatever can throw runs before the first write, so a failed call changes nothing.
  const keyStore: KeyStore = {
    listKeys(tenant) {
      return settle(() => {
        open()
        return [...(keys.get(tenant)?.values() ?? [])]
          .sort((a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0))
          .map(copy)
      })
    },
    insertKeyIfAbsent(key) {
      return settle(() => {
        open()
        const tenantKeys = keys.get(key.tenant) ?? new Map<string, StoredKey>()
        if (tenantKeys.has(key.kid)) return false
        tenantKeys.set(key.kid, copy(key))
        keys.set(key.tenant, tenantKeys)
        keyChanged(key.tenant)
        return true
      })
    },
    updateKeyState(tenant, kid, state, retiredAt) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key === undefined) return
        key.state = state
        if (retiredAt === undefined) delete key.retiredAt
        else key.retiredAt = retiredAt
        keyChanged(tenant)
      })
    },
    retireKey(tenant, kid, retiredAt) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key?.state !== 'active') return false
        key.state = 'retired'
        key.retiredAt = retiredAt
        keyChanged(tenant)
        return true
      })
    },
    updatePrivateKey(tenant, kid, current, next) {
      return settle(() => {
        open()
        const key = keys.get(tenant)?.get(kid)
        if (key?.privateKey !== current) return false
        key.privateKey = next
        keyChanged(tenant)
        return true
      })
    },
    deleteKey(tenant, kid) {
      return settle(() => {
        open()
        if (keys.get(tenant)?.delete(kid) !== true) return
        keyChanged(tenant)
        const pruned = prunedKids.get(tenant) ?? new Set<string>()
        pruned.add(kid)
        prunedKids.set(tenant, pruned)
      })
    },
    listPrunedKids(tenant) {
      return settle(() => {
        open()
        return [...(prunedKids.get(tenant) ?? [])].sort()
      })
    },
    listKeysOfTenants(tenants) {
      return settle(() => {
        open()
        return [...new Set(tenants)]
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
          .flatMap((tenant) =>
            [...(keys.get(tenant)?.values() ?? [])].sort(
              (a, b) => a.createdAt - b.createdAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
            ),
          )
          .map(copy)
      })
    },
    keyChangeCursor() {
      return settle(() => {
        open()
        return keySeq
      })
    },
    keyChangesSince(cursor) {
      return settle(() => {
        open()
        const tenants = [...keyChanges].filter(([, seq]) => seq > cursor).map(([name]) => name)
        return { cursor: Math.max(cursor, keySeq), tenants }
      })
    },
  }

  const clientAuthFailures = createMemoryFailureCounter(open)

  const throttle: ThrottleStore = {
    reserveAttempts(asked, terms) {
      return settle(() => {
        open()
        const { now, leaseMs } = terms
        // Ended windows and run-out holds are dropped as attempts come in, so that guessed
        // usernames do not pile up.
        for (const [other, { resetAt }] of windows) if (resetAt <= now) windows.delete(other)
        for (const [id, hold] of holds) if (hold.expiresAt <= now) holds.delete(id)
        const reservation = decideReservation(asked, {
          failures: (key) => windows.get(key),
          inFlight: (key) => [...holds.values()].filter((hold) => hold.keys.has(key)).length,
        })
        if (reservation.status !== 'granted') return reservation
        holds.set(reservation.hold, {
          keys: new Set(asked.map(({ key }) => key)),
          expiresAt: now + leaseMs,
        })
        return reservation
      })
    },
    settleAttempts(settlement, window) {
      return settle(() => {
        open()
        const { now, windowMs } = window
        holds.delete(settlement.hold)
        for (const key of settlement.fail) {
          const current = windows.get(key)
          if (current !== undefined && current.resetAt > now) current.count++
          else windows.set(key, { count: 1, resetAt: now + windowMs })
        }
        for (const key of settlement.clear) windows.delete(key)
      })
    },
  }

  const codes: AuthorizationCodeStore = {
    saveCode(code, options) {
      return settle(() => {
        open()
        const keep = codesToKeep(code, options)
        if (codeRows.has(code.tenant, code.codeHash)) throw conflictError('the authorization code')
        if (keep !== undefined) {
          const drop = new Set(codesToDrop(codeRows.rows(code.tenant), code, keep))
          codeRows.deleteWhere((row) => drop.has(row))
        }
        codeRows.set(code.tenant, code.codeHash, copyCode(code))
      })
    },
    findCode(tenant, codeHash) {
      return settle(() => {
        open()
        const code = codeRows.get(tenant, codeHash)
        return code === undefined ? undefined : copyCode(code)
      })
    },
    redeemCode(tenant, codeHash, now, issue) {
      return settle(() => {
        open()
        const code = codeRows.get(tenant, codeHash)
        if (code === undefined || code.consumedAt !== undefined || code.expiresAt <= now) {
          return false
        }
        let family: RefreshFamily | undefined
        if (issue !== undefined) {
          if (familyRows.has(tenant, issue.family.familyId)) {
            throw conflictError('the refresh family')
          }
          if (issue.tokenHash !== undefined && tokenRows.has(tenant, issue.tokenHash)) {
            throw conflictError('the refresh token')
          }
          family = copyFamily(issue.family)
        }
        code.consumedAt = now
        if (issue !== undefined && family !== undefined) {
          familyRows.set(tenant, family.familyId, family)
          if (issue.tokenHash !== undefined) {
            tokenRows.set(tenant, issue.tokenHash, {
              tokenHash: issue.tokenHash,
              familyId: family.familyId,
              createdAt: now,
            })
          }
        }
        return true
      })
    },
  }

  // With a clientId, a token of another client is as unknown as a made-up one: nothing changes.
  function rotate(
    tenant: string,
    oldHash: string,
    newHash: string,
    now: number,
    clientId: string | undefined,
  ): RotateResult {
    const token = tokenRows.get(tenant, oldHash)
    const family = token && familyRows.get(tenant, token.familyId)
    if (token === undefined || family === undefined) return { status: 'not_found' }
    if (clientId !== undefined && family.clientId !== clientId) return { status: 'not_found' }
    switch (rotationStep(token, family, now)) {
      case 'inactive':
        return { status: 'inactive', family: copyFamily(family) }
      case 'reuse':
        family.revokedAt ??= now
        return { status: 'reused', family: copyFamily(family) }
      case 'rotate':
        if (tokenRows.has(tenant, newHash)) throw conflictError('the refresh token')
        token.spentAt = now
        tokenRows.set(tenant, newHash, {
          tokenHash: newHash,
          familyId: family.familyId,
          createdAt: now,
        })
        return { status: 'rotated', family: copyFamily(family) }
    }
  }

  const refreshTokens: RefreshTokenStore = {
    findRefreshToken(tenant, tokenHash) {
      return settle(() => {
        open()
        const token = tokenRows.get(tenant, tokenHash)
        const family = token && familyRows.get(tenant, token.familyId)
        if (token === undefined || family === undefined) return undefined
        return { token: copyToken(token), family: copyFamily(family) }
      })
    },
    rotateRefreshToken(tenant, oldHash, newHash, now) {
      return settle(() => {
        open()
        return rotate(tenant, oldHash, newHash, now, undefined)
      })
    },
    rotateRefreshTokenForClient(tenant, clientId, oldHash, newHash, now) {
      return settle(() => {
        open()
        return rotate(tenant, oldHash, newHash, now, clientId)
      })
    },
    findFamily(tenant, familyId) {
      return settle(() => {
        open()
        const family = familyRows.get(tenant, familyId)
        return family === undefined ? undefined : copyFamily(family)
      })
    },
    revokeFamily(tenant, familyId, now) {
      return settle(() => {
        open()
        const family = familyRows.get(tenant, familyId)
        if (family !== undefined) family.revokedAt ??= now
      })
    },
    revokeFamiliesByCode(tenant, codeHash, now) {
      return settle(() => {
        open()
        for (const family of familyRows.rows(tenant)) {
          if (family.codeHash === codeHash) family.revokedAt ??= now
        }
      })
    },
  }

  const sessions: SessionStore = {
    createSession(session, replaces) {
      return settle(() => {
        open()
        if (sessionRows.has(session.tenant, session.idHash)) throw conflictError('the session')
        if (replaces !== undefined) {
          const previous = sessionRows.get(session.tenant, replaces)
          if (previous !== undefined) previous.endedAt ??= session.createdAt
        }
        sessionRows.set(session.tenant, session.idHash, copySession(session))
      })
    },
    findSession(tenant, idHash) {
      return settle(() => {
        open()
        const session = sessionRows.get(tenant, idHash)
        return session === undefined ? undefined : copySession(session)
      })
    },
    endSession(tenant, sid, now) {
      return settle(() => {
        open()
        let ended = false
        for (const session of sessionRows.rows(tenant)) {
          if (session.sid !== sid || session.endedAt !== undefined) continue
          if (session.expiresAt > now) ended = true
          session.endedAt = now
        }
        for (const code of codeRows.rows(tenant)) {
          if (code.sid === sid) code.consumedAt ??= now
        }
        for (const family of familyRows.rows(tenant)) {
          if (family.sid === sid) family.revokedAt ??= now
        }
        return ended
      })
    },
  }

  // JSON of the pair: no separator can be confused with a character of a kind or an id.
  const markKey = (kind: string, id: string): string => JSON.stringify([kind, id])

  const marks: MarkStore = {
    mark(tenant, kind, id, expiresAt, now) {
      return settle(() => {
        open()
        const key = markKey(kind, id)
        const current = markRows.get(tenant, key)
        if (current !== undefined && current > now) return false
        markRows.set(tenant, key, expiresAt)
        return true
      })
    },
    isMarked(tenant, kind, id, now) {
      return settle(() => {
        open()
        const expiresAt = markRows.get(tenant, markKey(kind, id))
        return expiresAt !== undefined && expiresAt > now
      })
    },
  }

  const secrets: SecretStore = {
    getOrCreateSecret(name, candidate) {
      return settle(() => {
        open()
        const stored = secretValues.get(name)
        if (stored !== undefined) return stored
        secretValues.set(name, candidate)
        return candidate
      })
    },
  }

  const expiry: ExpiryStore = {
    purgeExpired(now) {
      return settle(() => {
        open()
        let deleted =
          codeRows.deleteWhere((code) => code.expiresAt <= now - CODE_RETENTION_MS) +
          tokenRows.deleteWhere((token, tenant) => {
            const family = familyRows.get(tenant, token.familyId)
            return family === undefined || family.expiresAt <= now
          }) +
          familyRows.deleteWhere((family) => family.expiresAt <= now) +
          markRows.deleteWhere((expiresAt) => expiresAt <= now) +
          sessionRows.deleteWhere(
            (session) =>
              session.expiresAt <= now || (session.endedAt !== undefined && session.endedAt <= now),
          )
        for (const [key, window] of windows) {
          if (window.resetAt <= now) {
            windows.delete(key)
            deleted++
          }
        }
        for (const [id, hold] of holds) {
          if (hold.expiresAt <= now) {
            holds.delete(id)
            deleted++
          }
        }
        return deleted + clientAuthFailures.sweep(now)
      })
    },
  }

  const parsedConfig: ParsedConfigStore = {
    list() {
      return settle(() => {
        open()
        return [...parsedConfigRows].map(([key, { value }]) => ({ key, value }))
      })
    },
    add(entries, now) {
      return settle(() => {
        open()
        // checkedStore hands over the entries checked, each key once, in order.
        let inserted = 0
        for (const { key, value } of entries) {
          parsedConfigRows.set(key, { value, storedAt: now })
          inserted++
        }
        return inserted
      })
    },
    prune(keep, before) {
      return settle(() => {
        open()
        let deleted = 0
        for (const [key, { storedAt }] of parsedConfigRows) {
          if (storedAt < before && !keep.has(key)) {
            parsedConfigRows.delete(key)
            deleted++
          }
        }
        return deleted
      })
    },
  }

  const algorithms = createMemoryTenantAlgorithms(open)

  return {
    keys: keyStore,
    algorithms: algorithms.store,
    throttle,
    clientAuthFailures,
    codes,
    refreshTokens,
    marks,
    secrets,
    sessions,
    expiry,
    parsedConfig,
    ping() {
      return settle(() => {
        open()
      })
    },
    close() {
      return settle(() => {
        closed = true
        keys.clear()
        prunedKids.clear()
        windows.clear()
        holds.clear()
        codeRows.clear()
        familyRows.clear()
        tokenRows.clear()
        markRows.clear()
        sessionRows.clear()
        secretValues.clear()
        parsedConfigRows.clear()
        algorithms.clear()
      })
    },
  }
}
