import { createHash } from 'node:crypto'
import type {
  AuthorizationCodeRecord,
  ConsentRecord,
  FamilyIssue,
  RegisteredClientRecord,
  RefreshFamily,
  SessionRecord,
} from '@tessera/grants'
import type { StoredKey } from '@tessera/keys'
import { afterEach, beforeEach, expect } from 'vitest'
import { StoreError } from '../../errors.js'
import type { Store } from '../../store.js'

/** Opens a fresh, empty store of one adapter. */
export type OpenStore = () => Promise<Store>

export const t0 = Date.UTC(2025, 2, 10, 9)
export const minute = 60_000
export const hour = 60 * minute
export const day = 24 * hour

/**
 * Opens a store with `open` before each test of the enclosing describe and closes it after;
 * answers the open store of the running test.
 */
export function freshStoreEach(open: OpenStore): () => Store {
  let store: Store | undefined
  beforeEach(async () => {
    store = await open()
  })
  afterEach(async () => {
    await store?.close()
    store = undefined
  })
  return () => {
    if (store === undefined) throw new Error('no store is open outside a test')
    return store
  }
}

/** A key row; the store treats the JWK texts as opaque, so they need not be real keys. */
export function storedKey(fields: Partial<StoredKey> = {}): StoredKey {
  const kid = fields.kid ?? '2025-03-10'
  return {
    tenant: 'acme',
    kid,
    alg: 'RS256',
    publicJwk: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB' }),
    privateKey: JSON.stringify({ kty: 'RSA', n: `n-${kid}`, e: 'AQAB', d: `d-${kid}` }),
    createdAt: t0,
    state: 'active',
    ...fields,
  }
}

/** Hex SHA-256, as the grants store codes and refresh tokens. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** An authorization code of acme, issued at t0 for ten minutes, with PKCE. */
export function codeRecord(fields: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    codeHash: sha256('code-1'),
    tenant: 'acme',
    clientId: 'web',
    redirectUri: 'https://app.example/callback',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    scope: 'openid orders:read',
    sub: 'alice',
    claims: { email: 'alice@example.com', roles: ['admin'], profile: { locale: 'fr' } },
    createdAt: t0,
    expiresAt: t0 + 10 * minute,
    ...fields,
  }
}

/** A refresh family of acme, started at t0 for 30 days. */
export function refreshFamily(fields: Partial<RefreshFamily> = {}): RefreshFamily {
  return {
    familyId: 'family-1',
    tenant: 'acme',
    clientId: 'web',
    sub: 'alice',
    scope: 'openid orders:read',
    claims: { email: 'alice@example.com' },
    codeHash: sha256('code-1'),
    createdAt: t0,
    expiresAt: t0 + 30 * day,
    ...fields,
  }
}

/** A sign-in session of acme, opened at t0 for eight hours. */
export function sessionRecord(fields: Partial<SessionRecord> = {}): SessionRecord {
  return {
    idHash: sha256('session-1'),
    tenant: 'acme',
    sid: 'sid-1',
    sub: 'alice',
    claims: { email: 'alice@example.com', name: 'Alice', roles: ['admin'] },
    authTime: t0,
    createdAt: t0,
    expiresAt: t0 + 8 * hour,
    ...fields,
  }
}

/** A confidential client registered with acme at t0. */
export function registeredClient(
  fields: Partial<RegisteredClientRecord> = {},
): RegisteredClientRecord {
  return {
    tenant: 'acme',
    clientId: '0b7e4f0e-5a8c-4d7e-9a51-3f0c2b9d6e11',
    secretHash: sha256('client-secret'),
    registrationTokenHash: sha256('registration-token'),
    metadata: {
      client_name: 'Notes',
      redirect_uris: ['https://notes.example/callback', 'http://127.0.0.1/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    createdAt: t0,
    updatedAt: t0,
    ...fields,
  }
}

/** Alice's consent to a registered client of acme for one resource, for 30 days from t0. */
export function consentRecord(fields: Partial<ConsentRecord> = {}): ConsentRecord {
  return {
    tenant: 'acme',
    subject: 'alice',
    clientId: '0b7e4f0e-5a8c-4d7e-9a51-3f0c2b9d6e11',
    resources: 'https://mcp.acme.test/mcp',
    scopes: ['tools:read', 'tools:call'],
    expiresAt: t0 + 30 * day,
    ...fields,
  }
}

/**
 * Starts a family the only way the port allows: saves a code of its own (live for a day) and
 * redeems it at t0 with the family and its first token.
 */
export async function startFamily(
  store: Store,
  family: RefreshFamily,
  tokenHash: string,
): Promise<void> {
  const codeHash = sha256(`code-of-${family.familyId}`)
  await store.codes.saveCode(codeRecord({ tenant: family.tenant, codeHash, expiresAt: t0 + day }))
  const issue: FamilyIssue = { family, tokenHash }
  if (!(await store.codes.redeemCode(family.tenant, codeHash, t0, issue))) {
    throw new Error('startFamily: the code was not redeemed')
  }
}

/** The StoreError `promise` rejects with; fails the test if it resolves or throws another. */
export async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreError)
  return error as StoreError
}
