import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { StoreError } from '../errors.js'
import type { Store } from '../store.js'
import { checkedStore } from './checked-store.js'

const t0 = 1_750_000_000_000

const METHODS = {
  keys: [
    'listKeys',
    'insertKeyIfAbsent',
    'updateKeyState',
    'retireKey',
    'updatePrivateKey',
    'deleteKey',
    'listPrunedKids',
    'listKeysOfTenants',
    'keyChangeCursor',
    'keyChangesSince',
  ],
  algorithms: ['listTenantAlgorithms', 'insertTenantAlgorithmIfAbsent', 'replaceTenantAlgorithm'],
  throttle: ['reserveAttempts', 'settleAttempts'],
  clientAuthFailures: ['failures', 'recordFailure'],
  codes: ['saveCode', 'findCode', 'redeemCode'],
  refreshTokens: [
    'findRefreshToken',
    'rotateRefreshToken',
    'rotateRefreshTokenForClient',
    'findFamily',
    'revokeFamily',
    'revokeFamiliesByCode',
  ],
  marks: ['mark', 'isMarked'],
  secrets: ['getOrCreateSecret'],
  sessions: ['createSession', 'findSession', 'endSession'],
  clientRegistrations: [
    'registerClient',
    'findRegisteredClient',
    'updateRegisteredClient',
    'deleteRegisteredClient',
  ],
  consents: ['saveConsent', 'findConsent', 'deleteConsents'],
  expiry: ['purgeExpired'],
  parsedConfig: ['list', 'add', 'prune'],
} as const

type Calls = { port: string; method: string; args: unknown[] }[]

/** An adapter whose every method records its call and answers 'answer'. */
function fakeAdapter(options: { without?: string[]; ping?: () => Promise<void> } = {}): {
  adapter: Store
  calls: Calls
} {
  const calls: Calls = []
  const ports = Object.fromEntries(
    Object.entries(METHODS).map(([port, methods]) => [
      port,
      Object.fromEntries(
        methods
          .filter((method) => !(options.without ?? []).includes(method))
          .map((method) => [
            method,
            (...args: unknown[]) => {
              calls.push({ port, method, args })
              return Promise.resolve('answer')
            },
          ]),
      ),
    ]),
  )
  const adapter = {
    ...ports,
    ping: options.ping ?? (() => Promise.resolve()),
    close: () => Promise.resolve(),
  } as unknown as Store
  return { adapter, calls }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

const code = {
  codeHash: 'h',
  tenant: 'acme',
  clientId: 'app',
  redirectUri: 'https://app.example/cb',
  scope: 'openid',
  sub: 'alice',
  claims: {},
  createdAt: t0,
  expiresAt: t0 + 60_000,
}

const session = {
  idHash: 'h',
  tenant: 'acme',
  sid: 'sid',
  sub: 'alice',
  claims: {},
  authTime: t0,
  createdAt: t0,
  expiresAt: t0 + 60_000,
}

const registration = {
  tenant: 'acme',
  clientId: 'c-1',
  registrationTokenHash: sha256('token'),
  metadata: {},
  createdAt: t0,
  updatedAt: t0,
}

const consent = {
  tenant: 'acme',
  subject: 'alice',
  clientId: 'c-1',
  resources: '',
  scopes: ['openid'],
  expiresAt: t0,
}

const algorithm = { tenant: 'acme', algorithm: 'RS256', since: t0, hs256Before: false }

/** A misuse of each checked method, and the message of its TypeError. */
const MISUSES: [string, (store: Store) => Promise<unknown>, RegExp][] = [
  [
    'keys.listKeysOfTenants',
    (s) => s.keys.listKeysOfTenants([1] as never),
    /^listKeysOfTenants: tenants/,
  ],
  ['keys.keyChangesSince', (s) => s.keys.keyChangesSince(-1), /^keyChangesSince: cursor/],
  [
    'algorithms.listTenantAlgorithms',
    (s) => s.algorithms.listTenantAlgorithms('acme' as never),
    /^listTenantAlgorithms: tenants/,
  ],
  [
    'algorithms.insertTenantAlgorithmIfAbsent',
    (s) => s.algorithms.insertTenantAlgorithmIfAbsent({ ...algorithm, tenant: '' } as never),
    /^insertTenantAlgorithmIfAbsent: not a tenant algorithm record/,
  ],
  [
    'algorithms.replaceTenantAlgorithm',
    (s) =>
      s.algorithms.replaceTenantAlgorithm(
        algorithm as never,
        {
          ...algorithm,
          algorithm: 'none',
        } as never,
      ),
    /^replaceTenantAlgorithm: not a tenant algorithm record/,
  ],
  [
    'throttle.reserveAttempts',
    (s) => s.throttle.reserveAttempts([], { now: t0, leaseMs: 1 }),
    /^reserveAttempts: keys must be a non-empty array/,
  ],
  [
    'throttle.settleAttempts',
    (s) =>
      s.throttle.settleAttempts({ hold: 'h', fail: ['k'], clear: ['k'] }, { now: t0, windowMs: 1 }),
    /^settleAttempts: fail and clear keys must be distinct/,
  ],
  [
    'clientAuthFailures.failures',
    (s) => s.clientAuthFailures.failures(['k', 'k'], t0),
    /^failures: keys must be distinct/,
  ],
  [
    'clientAuthFailures.recordFailure',
    (s) => s.clientAuthFailures.recordFailure([{ key: 'k', limit: 0 }], { now: t0, windowMs: 1 }),
    /^recordFailure: limit must be a positive integer/,
  ],
  [
    'codes.saveCode',
    (s) => s.codes.saveCode({ ...code, expiresAt: t0 + 0.5 }),
    /^saveCode: expiresAt must be integer epoch milliseconds/,
  ],
  [
    'codes.saveCode (options)',
    (s) => s.codes.saveCode(code, { keepPerSession: 0 }),
    /^saveCode: keepPerSession must be a positive integer/,
  ],
  [
    'codes.redeemCode',
    (s) => s.codes.redeemCode('acme', 'h', Number.NaN, undefined),
    /^redeemCode: now must be integer epoch milliseconds/,
  ],
  [
    'refreshTokens.rotateRefreshToken',
    (s) => s.refreshTokens.rotateRefreshToken('acme', 'a', 'b\ud800', t0),
    /^rotateRefreshToken: newHash must be a string of well-formed Unicode/,
  ],
  [
    'refreshTokens.rotateRefreshTokenForClient',
    (s) =>
      s.refreshTokens.rotateRefreshTokenForClient?.('acme', 'app', 'a', 'b', t0 + 0.5) ??
      Promise.resolve(),
    /^rotateRefreshTokenForClient: now must be integer epoch milliseconds/,
  ],
  [
    'refreshTokens.revokeFamily',
    (s) => s.refreshTokens.revokeFamily('acme', 'f', Number.NaN),
    /^revokeFamily: now/,
  ],
  [
    'refreshTokens.revokeFamiliesByCode',
    (s) => s.refreshTokens.revokeFamiliesByCode('acme', 'h', Number.NaN),
    /^revokeFamiliesByCode: now/,
  ],
  [
    'marks.mark',
    (s) => s.marks.mark('acme', 'jti', 'id', t0 + 0.5, t0),
    /^mark: expiresAt must be integer epoch milliseconds/,
  ],
  [
    'marks.isMarked',
    (s) => s.marks.isMarked('acme', '', 'id', t0),
    /^isMarked: kind must be 1 to 32 characters/,
  ],
  [
    'secrets.getOrCreateSecret',
    (s) => s.secrets.getOrCreateSecret('name', 'a\u0000b'),
    /^getOrCreateSecret: name and candidate must not contain U\+0000/,
  ],
  [
    'sessions.createSession',
    (s) => s.sessions.createSession(session, 'x\udc00'),
    /^createSession: replaces must be a string of well-formed Unicode/,
  ],
  [
    'sessions.endSession',
    (s) => s.sessions.endSession('acme', 'sid', Number.NaN),
    /^endSession: now/,
  ],
  [
    'clientRegistrations.registerClient',
    (s) => s.clientRegistrations.registerClient(registration, 0),
    /^registerClient: max must be a positive integer/,
  ],
  [
    'clientRegistrations.findRegisteredClient',
    (s) => s.clientRegistrations.findRegisteredClient('acme', null as never),
    /^findRegisteredClient: clientId must be a string/,
  ],
  [
    'clientRegistrations.updateRegisteredClient',
    (s) => s.clientRegistrations.updateRegisteredClient({ ...registration, secretHash: 'secret' }),
    /^updateRegisteredClient: secretHash must be a SHA-256 digest in lower-case hex/,
  ],
  [
    'clientRegistrations.deleteRegisteredClient',
    (s) => s.clientRegistrations.deleteRegisteredClient(1 as never, 'c-1'),
    /^deleteRegisteredClient: tenant must be a string/,
  ],
  [
    'consents.saveConsent',
    (s) => s.consents.saveConsent({ ...consent, scopes: ['a b'] }),
    /^saveConsent: scopes must be an array of scope tokens/,
  ],
  [
    'consents.findConsent',
    (s) => s.consents.findConsent('acme', 'alice', 'c-1', '', t0 + 0.5),
    /^findConsent: now must be integer epoch milliseconds/,
  ],
  [
    'consents.deleteConsents',
    (s) => s.consents.deleteConsents('acme', undefined as never),
    /^deleteConsents: clientId must be a string/,
  ],
  ['expiry.purgeExpired', (s) => s.expiry.purgeExpired(Number.NaN), /^purgeExpired: now/],
  [
    'parsedConfig.add',
    (s) => s.parsedConfig.add([{ key: 'not-a-digest', value: 'v' }], t0),
    /^parsedConfig.add: key must be a SHA-256 digest/,
  ],
  [
    'parsedConfig.prune',
    (s) => s.parsedConfig.prune(new Set(), -1),
    /^parsedConfig.prune: before must be a non-negative integer/,
  ],
]

describe('checkedStore', () => {
  it.each(MISUSES)(
    'refuses a misuse of %s with a TypeError, never calling the adapter',
    async (_, use, message) => {
      const { adapter, calls } = fakeAdapter()
      const answer = use(checkedStore(adapter))
      expect(answer).toBeInstanceOf(Promise)
      const error: unknown = await answer.catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TypeError)
      expect((error as Error).message).toMatch(message)
      expect(calls).toEqual([])
    },
  )

  it('passes well-formed arguments to the adapter and answers what it answers', async () => {
    const { adapter, calls } = fakeAdapter()
    const store = checkedStore(adapter)
    expect(await store.marks.mark('acme', 'jti', 'id', t0 + 1, t0)).toBe('answer')
    expect(await store.codes.saveCode(code, { keepPerSession: 3 })).toBe('answer')
    expect(await store.keys.listKeys('acme')).toBe('answer')
    expect(calls).toEqual([
      { port: 'marks', method: 'mark', args: ['acme', 'jti', 'id', t0 + 1, t0] },
      { port: 'codes', method: 'saveCode', args: [code, { keepPerSession: 3 }] },
      { port: 'keys', method: 'listKeys', args: ['acme'] },
    ])
  })

  it('looks up keys no row can hold as empty strings, which no row has', async () => {
    const { adapter, calls } = fakeAdapter()
    const store = checkedStore(adapter)
    await store.clientRegistrations.findRegisteredClient('acme', 'c\u0000')
    await store.clientRegistrations.deleteRegisteredClient('acme\ud800', 'c-1')
    await store.consents.findConsent('acme', 'alice', 'c-1', 'r\u0000', t0)
    await store.consents.deleteConsents('acme', 'x'.repeat(2049))
    await store.consents.findConsent('acme', 'alice', 'c-1', '', t0)
    expect(calls).toEqual([
      { port: 'clientRegistrations', method: 'findRegisteredClient', args: ['', ''] },
      { port: 'clientRegistrations', method: 'deleteRegisteredClient', args: ['', ''] },
      { port: 'consents', method: 'findConsent', args: ['', '', '', '', t0] },
      { port: 'consents', method: 'deleteConsents', args: ['', ''] },
      { port: 'consents', method: 'findConsent', args: ['acme', 'alice', 'c-1', '', t0] },
    ])
  })

  it('hands parsedConfig.add its entries copied, each key once, sorted', async () => {
    const { adapter, calls } = fakeAdapter()
    const [a, b] = [sha256('a'), sha256('b')].sort()
    let reads = 0
    const getter = {
      key: b,
      get value() {
        reads++
        return 'from a getter'
      },
    }
    await checkedStore(adapter).parsedConfig.add(
      [getter, { key: a, value: 'first' }, { key: a, value: 'second' }] as never,
      t0,
    )
    expect(reads).toBe(1)
    expect(calls).toEqual([
      {
        port: 'parsedConfig',
        method: 'add',
        args: [
          [
            { key: a, value: 'first' },
            { key: b, value: 'from a getter' },
          ],
          t0,
        ],
      },
    ])
  })

  it('hands parsedConfig.prune a Set of the keys to keep', async () => {
    const { adapter, calls } = fakeAdapter()
    const key = sha256('kept')
    await checkedStore(adapter).parsedConfig.prune(new Set([key]), t0)
    expect(calls).toEqual([{ port: 'parsedConfig', method: 'prune', args: [new Set([key]), t0] }])
  })

  it('leaves absent an optional method the adapter lacks', () => {
    const { adapter } = fakeAdapter({ without: ['rotateRefreshTokenForClient'] })
    expect('rotateRefreshTokenForClient' in checkedStore(adapter).refreshTokens).toBe(false)
  })

  it('refuses a misuse of a closed adapter with the adapter’s own refusal', async () => {
    const closed = new StoreError('ERR_STORE_CLOSED', 'the fake store is closed')
    let open = true
    const { adapter, calls } = fakeAdapter({
      ping: () => (open ? Promise.resolve() : Promise.reject(closed)),
    })
    const store = checkedStore(adapter)
    await store.close()
    // Closing, not yet closed: the misuse is the refusal.
    await expect(store.expiry.purgeExpired(Number.NaN)).rejects.toThrow(TypeError)
    open = false
    await expect(store.expiry.purgeExpired(Number.NaN)).rejects.toBe(closed)
    expect(calls).toEqual([])
  })
})
