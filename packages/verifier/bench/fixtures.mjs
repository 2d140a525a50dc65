// What the benchmarks share: the keys, one token per algorithm, this package's verifier as the
// Koa route uses it, and the baseline, jose's jwtVerify in a bare Koa middleware.
import { createSecretKey } from 'node:crypto'
import { createHash, randomUUID } from 'node:crypto'
import { SignJWT, exportJWK, generateKeyPair, jwtVerify } from 'jose'
import { createMemoryReplayCache, createVerifier } from '../dist/index.js'

export const ISSUER = 'https://issuer.bench.test'
export const SECRET = 'bench-secret-0123456789-abcdefghijklmn'

const { privateKey, publicKey } = await generateKeyPair('RS256')
const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }] }
// Imported once: handing jose raw bytes would re-import the secret on every call.
const secretKey = createSecretKey(Buffer.from(SECRET, 'utf8'))

/** The key jose verifies `alg` tokens with, the same key object for every call. */
export const keys = { HS256: secretKey, RS256: publicKey }

const now = Math.floor(Date.now() / 1000)
/** One token per algorithm, valid for an hour, with the claims a Tessera issuer writes. */
export const tokens = {}
for (const alg of ['HS256', 'RS256']) {
  tokens[alg] = await new SignJWT({ sub: 'u', scope: 'read', client_id: 'c' })
    .setProtectedHeader(alg === 'HS256' ? { alg, typ: 'JWT' } : { alg, typ: 'JWT', kid: 'bench' })
    .setIssuer(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(alg === 'HS256' ? secretKey : privateKey)
}

/** An RS256 token like `tokens.RS256`, bound to the DPoP key with thumbprint `jkt`. */
export function boundToken(jkt) {
  return new SignJWT({ sub: 'u', scope: 'read', client_id: 'c', cnf: { jkt } })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'bench' })
    .setIssuer(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey)
}

/**
 * `count` DPoP proofs (ES256, each with its own jti) of `key` for `GET url` with `token`, made
 * with jose ahead of a load run: the load generator sends one per request.
 */
export async function dpopProofs(key, url, token, count) {
  const ath = createHash('sha256').update(token).digest('base64url')
  const iat = Math.floor(Date.now() / 1000)
  const header = { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }
  const proofs = []
  for (let i = 0; i < count; i++) {
    const claims = { htm: 'GET', htu: url, iat, jti: randomUUID(), ath }
    proofs.push(await new SignJWT(claims).setProtectedHeader(header).sign(key.privateKey))
  }
  return proofs
}

/**
 * A verifier for the tokens, HS256 and RS256, with or without the token cache; with `dpop`,
 * DPoP on, its memory replay cache sized for the benchmark's rate (a million proofs per 65 s).
 */
export function benchVerifier(tokenCache, dpop = false) {
  return createVerifier({
    issuer: ISSUER,
    secret: SECRET,
    tokenCache: tokenCache ? { max: 10_000 } : undefined,
    dpop: dpop ? { replayCache: createMemoryReplayCache({ max: 1_000_000 }) } : undefined,
    // The JWKS comes from memory: the benchmark measures verification, not the network.
    fetch: () => Promise.resolve(Response.json(jwks)),
  })
}

/**
 * The baseline: jose's `jwtVerify` in a bare Koa middleware, doing the same work as `bearer`
 * around the signature check, so that the ratio measures verification: the Authorization
 * header parsed as RFC 6750 §2.1 says (scheme in any case, b64token), `exp` required with the
 * same 5 s tolerance, iss and alg checked, and the same `ctx.state.auth` (token, payload,
 * protectedHeader, scopes). Options are built once, as the verifier's are.
 */
export function joseMiddleware(alg) {
  const key = keys[alg]
  const options = { issuer: ISSUER, algorithms: [alg], requiredClaims: ['exp'], clockTolerance: 5 }
  const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('authorization').trim())
    if (match === null) {
      ctx.status = 401
      return
    }
    const token = match[1]
    try {
      const { payload, protectedHeader } = await jwtVerify(token, key, options)
      const scopes =
        typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []
      ctx.state.auth = { token, payload, protectedHeader, scopes }
    } catch {
      ctx.status = 401
      return
    }
    await next()
  }
}
