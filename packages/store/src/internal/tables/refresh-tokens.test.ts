import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { parseTokenFamilyRow } from './refresh-tokens.js'

// The zod schema equivalent to parseTokenFamilyRow: its hand-written checks must accept exactly
// the rows the schema accepts.
const Claims = z
  .string()
  .transform((text, ctx): unknown => {
    try {
      return JSON.parse(text)
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' })
      return z.NEVER
    }
  })
  .pipe(
    z.custom<Record<string, unknown>>(
      (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    ),
  )
const TokenFamilyRowSchema = z.object({
  tenant: z.string(),
  family_id: z.string(),
  client_id: z.string(),
  sub: z.string(),
  scope: z.string(),
  claims: Claims,
  code_hash: z.string().nullable(),
  sid: z.string().nullable(),
  auth_time: z.int().nullable(),
  created_at: z.int(),
  expires_at: z.int(),
  revoked_at: z.int().nullable(),
  resources: z.string().nullable(),
  dpop_jkt: z.string().nullable(),
  token_hash: z.string(),
  token_created_at: z.int(),
  token_spent_at: z.int().nullable(),
})

const good = {
  tenant: 'acme',
  family_id: 'family-1',
  client_id: 'web',
  sub: 'alice',
  scope: 'openid orders:read',
  claims: '{"email":"alice@example.com","roles":["admin"]}',
  code_hash: 'c0de',
  sid: 'sid-1',
  auth_time: 1_741_597_100_000,
  created_at: 1_741_597_200_000,
  expires_at: 1_744_189_200_000,
  revoked_at: null,
  resources: 'https://mcp.example/mcp',
  dpop_jkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
  token_hash: 'a1b2',
  token_created_at: 1_741_597_200_000,
  token_spent_at: null,
}

type Column = keyof typeof good
const TEXT: Column[] = ['tenant', 'family_id', 'client_id', 'sub', 'scope', 'token_hash']
const NULLABLE_TEXT: Column[] = ['code_hash', 'sid', 'resources', 'dpop_jkt']
const INT: Column[] = ['created_at', 'expires_at', 'token_created_at']
const NULLABLE_INT: Column[] = ['auth_time', 'revoked_at', 'token_spent_at']

// Values of every type a driver could hand back, and the edges of each.
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'text',
  '12',
  0,
  -0,
  1.5,
  -7,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  Number.MIN_SAFE_INTEGER - 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  12n,
  true,
  {},
  [],
  Buffer.from('x'),
]
const ODD_CLAIMS: unknown[] = [
  '{}',
  '{"a":1}',
  '[]',
  '[1, 2]',
  'null',
  '1',
  '"text"',
  'true',
  '{',
  '',
  'not json',
  null,
  {},
  1,
]

function verdict(row: unknown): 'valid' | 'invalid' {
  try {
    parseTokenFamilyRow(row)
    return 'valid'
  } catch (error) {
    expect(error).toMatchObject({ name: 'StoreError', code: 'ERR_STORE_ROW_INVALID' })
    return 'invalid'
  }
}

describe('parseTokenFamilyRow', () => {
  it('reads a row into the token and its family, leaving NULL columns out', () => {
    expect(parseTokenFamilyRow(good)).toEqual({
      token: { tokenHash: 'a1b2', familyId: 'family-1', createdAt: 1_741_597_200_000 },
      family: {
        familyId: 'family-1',
        tenant: 'acme',
        clientId: 'web',
        sub: 'alice',
        scope: 'openid orders:read',
        claims: { email: 'alice@example.com', roles: ['admin'] },
        codeHash: 'c0de',
        sid: 'sid-1',
        authTime: 1_741_597_100_000,
        createdAt: 1_741_597_200_000,
        expiresAt: 1_744_189_200_000,
        resources: ['https://mcp.example/mcp'],
        dpopJkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
      },
    })
    const spent = parseTokenFamilyRow({
      ...good,
      code_hash: null,
      sid: null,
      auth_time: null,
      revoked_at: 5,
      resources: null,
      dpop_jkt: null,
      token_spent_at: 4,
    })
    expect(spent.token.spentAt).toBe(4)
    expect(spent.family.revokedAt).toBe(5)
    expect(spent.family).not.toHaveProperty('codeHash')
    expect(spent.family).not.toHaveProperty('sid')
    expect(spent.family).not.toHaveProperty('authTime')
    expect(spent.family).not.toHaveProperty('resources')
    expect(spent.family).not.toHaveProperty('dpopJkt')
  })

  it('ignores columns it does not know, as the zod schema did', () => {
    expect(parseTokenFamilyRow({ ...good, extra: 1 }).family).not.toHaveProperty('extra')
  })

  it('refuses a row that is not an object', () => {
    for (const row of [undefined, null, 'row', 1, [], [good]]) {
      expect(verdict(row)).toBe('invalid')
    }
  })

  it('refuses a row missing any column', () => {
    for (const column of Object.keys(good)) {
      const row: Record<string, unknown> = { ...good }
      delete row[column]
      expect(verdict(row), column).toBe('invalid')
    }
  })

  it('gives the zod schema’s verdict for every column set to every odd value', () => {
    const columns = [...TEXT, ...NULLABLE_TEXT, ...INT, ...NULLABLE_INT]
    for (const column of columns) {
      for (const value of ODD_VALUES) {
        const row = { ...good, [column]: value }
        const expected = TokenFamilyRowSchema.safeParse(row).success ? 'valid' : 'invalid'
        expect(verdict(row), `${column} = ${String(value)}`).toBe(expected)
      }
    }
    for (const claims of [...ODD_CLAIMS, ...ODD_VALUES]) {
      const row = { ...good, claims }
      const expected = TokenFamilyRowSchema.safeParse(row).success ? 'valid' : 'invalid'
      expect(verdict(row), `claims = ${String(claims)}`).toBe(expected)
    }
  })

  it('names every bad column, and never echoes a value', () => {
    const secret = 'secret-claim-value'
    const error = (() => {
      try {
        parseTokenFamilyRow({ ...good, sub: 7, expires_at: '1', token_hash: null })
      } catch (caught) {
        return caught as Error
      }
      throw new Error('accepted a bad row')
    })()
    expect(error.message).toContain('sub:')
    expect(error.message).toContain('expires_at:')
    expect(error.message).toContain('token_hash:')
    expect(() => parseTokenFamilyRow({ ...good, claims: `[${JSON.stringify(secret)}]` })).toThrow(
      /claims/,
    )
    try {
      parseTokenFamilyRow({ ...good, claims: `[${JSON.stringify(secret)}]` })
    } catch (caught) {
      expect((caught as Error).message).not.toContain(secret)
    }
  })
})
