import type {
  AuthorizationCodeRecord,
  RefreshFamily,
  RefreshTokenRecord,
  SessionRecord,
} from '@tessera/grants'
import type { StoredKey } from '@tessera/keys'

// The memory store hands out and keeps copies, never the caller's objects. The copies are built
// field by field, like a row read back from SQL: an optional field that is undefined is left
// out, and claims go through JSON as they would through a TEXT column.

export function copyKey(key: StoredKey): StoredKey {
  return { ...key }
}

function copyClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(claims)) as Record<string, unknown>
}

export function copyCode(c: AuthorizationCodeRecord): AuthorizationCodeRecord {
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
  if (c.resources !== undefined) code.resources = [...c.resources]
  if (c.dpopJkt !== undefined) code.dpopJkt = c.dpopJkt
  return code
}

export function copyFamily(f: RefreshFamily): RefreshFamily {
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
  if (f.resources !== undefined) family.resources = [...f.resources]
  if (f.dpopJkt !== undefined) family.dpopJkt = f.dpopJkt
  return family
}

export function copySession(s: SessionRecord): SessionRecord {
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

export function copyToken(t: RefreshTokenRecord): RefreshTokenRecord {
  const token: RefreshTokenRecord = {
    tokenHash: t.tokenHash,
    familyId: t.familyId,
    createdAt: t.createdAt,
  }
  if (t.spentAt !== undefined) token.spentAt = t.spentAt
  return token
}
