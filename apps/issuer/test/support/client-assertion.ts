import { randomUUID } from 'node:crypto'
import { cpSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { JWK, KeyLike } from 'jose'
import { FIXTURES } from './issuer.js'

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** A client's signing key: the private half signs, `jwk` is what the server is given. */
export interface ClientKey {
  alg: 'RS256' | 'ES256' | 'PS256'
  kid: string
  privateKey: KeyLike
  jwk: JWK
}

export async function clientKey(alg: ClientKey['alg'], kid: string): Promise<ClientKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid } }
}

/**
 * A client assertion for `clientId` at `audience`, valid for a minute with a fresh jti;
 * `claims` override or (when undefined) remove claims, `header` overrides the header.
 */
export function assertion(
  key: ClientKey,
  clientId: string,
  audience: string | string[],
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const payload: Record<string, unknown> = {
    iss: clientId,
    sub: clientId,
    aud: audience,
    iat: now,
    exp: now + 60,
    jti: randomUUID(),
    ...claims,
  }
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name]
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey)
}

/** The form fields of a password grant authenticated by `clientAssertion`. */
export function assertionGrant(clientAssertion: string): Record<string, string> {
  return {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: clientAssertion,
  }
}

/** A configuration directory holding `yaml` as its tenants file and the test users. */
export function writeConfig(dir: string, yaml: string): string {
  cpSync(join(FIXTURES, 'basic', 'providers'), join(dir, 'providers'), { recursive: true })
  writeFileSync(join(dir, 'tenants.yaml'), yaml)
  return dir
}

/** A client's JWKS endpoint on loopback: each path answers what `routes` says, and counts. */
export interface JwksServer {
  url: string
  /** GETs per path. */
  hits: Map<string, number>
  routes: Map<string, (req: IncomingMessage, res: ServerResponse) => void>
  close(): Promise<void>
}

export async function startJwksServer(): Promise<JwksServer> {
  const hits = new Map<string, number>()
  const routes: JwksServer['routes'] = new Map()
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const route = routes.get(path)
    if (route) route(req, res)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    hits,
    routes,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A route answering the JWK Set of `keys()` at the time of each request. */
export function serveKeys(keys: () => ClientKey[]) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' })
    res.end(JSON.stringify({ keys: keys().map((key) => key.jwk) }))
  }
}
