// node-oidc-provider set up as the benchmark's tenants are: an RS256 client with rotating refresh
// tokens and an HS256 client_credentials client, both issuing JWT access tokens, kept in SQLite
// (WAL, synchronous = NORMAL, as Tessera's SQLite store) through a small adapter. `pnpm bench`
// runs it beside the issuer in the same rounds. `POST /bench/refresh-token` with
// `{"client_id": …}` mints a grant and a refresh token for the bench user: the pool that the
// refresh scenario draws on (the issuer's pool comes through /authorize instead). Prints its URL
// on stdout once listening. Argument: the SQLite file. node-oidc-provider 8 is the line that
// supports Node 20; 9 asks for Node 22.
import { generateKeyPairSync } from 'node:crypto'
import Database from 'better-sqlite3'
import Provider from 'oidc-provider'
import { OIDC_HS, OIDC_RS, OIDC_SECRET } from './lib.mjs'

const RESOURCE = 'http://api.bench'
const HS_KEY = Buffer.from('bench-secret-0123456789-abcdefghijklmnop')

const db = new Database(process.argv[2] ?? ':memory:')
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.exec(`CREATE TABLE IF NOT EXISTS oidc (
  model TEXT NOT NULL, id TEXT NOT NULL, payload TEXT NOT NULL, grant_id TEXT,
  expires_at INTEGER, PRIMARY KEY (model, id))`)
const statements = {
  upsert: db.prepare(
    `INSERT INTO oidc (model, id, payload, grant_id, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload,
       grant_id = excluded.grant_id, expires_at = excluded.expires_at`,
  ),
  find: db.prepare('SELECT payload, expires_at FROM oidc WHERE model = ? AND id = ?'),
  consume: db.prepare(
    `UPDATE oidc SET payload = json_set(payload, '$.consumed', ?) WHERE model = ? AND id = ?`,
  ),
  destroy: db.prepare('DELETE FROM oidc WHERE model = ? AND id = ?'),
  revoke: db.prepare('DELETE FROM oidc WHERE grant_id = ?'),
}

/** The storage interface node-oidc-provider asks of an adapter, one instance per model. */
class SqliteAdapter {
  constructor(model) {
    this.model = model
  }
  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : null
    const grantId = payload.grantId ?? null
    statements.upsert.run(this.model, id, JSON.stringify(payload), grantId, expiresAt)
  }
  async find(id) {
    const row = statements.find.get(this.model, id)
    if (row === undefined || (row.expires_at !== null && row.expires_at < Date.now())) return
    return JSON.parse(row.payload)
  }
  async findByUid() {
    return undefined
  }
  async findByUserCode() {
    return undefined
  }
  async consume(id) {
    statements.consume.run(Math.floor(Date.now() / 1000), this.model, id)
  }
  async destroy(id) {
    statements.destroy.run(this.model, id)
  }
  async revokeByGrantId(grantId) {
    statements.revoke.run(grantId)
  }
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const client = (clientId, grants) => ({
  client_id: clientId,
  client_secret: OIDC_SECRET,
  token_endpoint_auth_method: 'client_secret_post',
  grant_types: grants,
  response_types: grants.includes('authorization_code') ? ['code'] : [],
  redirect_uris: grants.includes('authorization_code') ? ['http://localhost:9999/cb'] : [],
  scope: 'read',
})
const provider = new Provider('http://oidc.bench', {
  adapter: SqliteAdapter,
  clients: [
    client(OIDC_RS, ['authorization_code', 'refresh_token']),
    client(OIDC_HS, ['client_credentials']),
  ],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256' }] },
  cookies: { keys: ['bench-cookie-key-0123456789'] },
  scopes: ['read', 'offline_access'],
  rotateRefreshToken: true,
  findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, _resource, client) => ({
        scope: 'read',
        audience: RESOURCE,
        accessTokenTTL: 7200,
        accessTokenFormat: 'jwt',
        jwt: {
          sign: client.clientId === OIDC_HS ? { alg: 'HS256', key: HS_KEY } : { alg: 'RS256' },
        },
      }),
    },
  },
})

// The refresh-token pool's source: a grant for the bench user and a refresh token under it.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'POST' || ctx.path !== '/bench/refresh-token') return next()
  const chunks = []
  for await (const chunk of ctx.req) chunks.push(chunk)
  const clientId = JSON.parse(Buffer.concat(chunks).toString()).client_id
  const grant = new provider.Grant({ accountId: 'bench-user', clientId })
  grant.addResourceScope(RESOURCE, 'read')
  const grantId = await grant.save()
  const refreshToken = new provider.RefreshToken({
    accountId: 'bench-user',
    client: await provider.Client.find(clientId),
    grantId,
    gty: 'authorization_code',
    resource: RESOURCE,
    scope: 'read',
  })
  ctx.body = { refresh_token: await refreshToken.save() }
})

const server = provider.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
