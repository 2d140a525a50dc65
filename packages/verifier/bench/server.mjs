// One benchmark server: `node server.mjs <mode>` listens on 127.0.0.1 and prints one JSON line
// `{ url, token }`. Modes: open (no auth), bearer-hs, bearer-rs, bearer-rs-cached,
// bearer-hs-cached (this package's Koa adapter), jose-hs, jose-rs (jose's jwtVerify in a bare
// Koa middleware, the baseline).
import { createSecretKey } from 'node:crypto'
import { SignJWT, exportJWK, generateKeyPair, jwtVerify } from 'jose'
import Koa from 'koa'
import { createVerifier } from '../dist/index.js'
import { bearer } from '../dist/koa.js'

const mode = process.argv[2] ?? 'open'
const ISSUER = 'https://issuer.bench.test'
const SECRET = 'bench-secret-0123456789-abcdefghijklmn'
const alg = mode.endsWith('-hs') || mode === 'bearer-hs-cached' ? 'HS256' : 'RS256'

const { privateKey, publicKey } = await generateKeyPair('RS256')
const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }] }
// Imported once: handing jose raw bytes would re-import the secret on every call.
const secretKey = createSecretKey(Buffer.from(SECRET, 'utf8'))
const now = Math.floor(Date.now() / 1000)
const token = await new SignJWT({ sub: 'u', scope: 'read', client_id: 'c' })
  .setProtectedHeader(alg === 'HS256' ? { alg, typ: 'JWT' } : { alg, typ: 'JWT', kid: 'bench' })
  .setIssuer(ISSUER)
  .setIssuedAt(now)
  .setExpirationTime(now + 3600)
  .sign(alg === 'HS256' ? secretKey : privateKey)

const app = new Koa()
if (mode.startsWith('bearer')) {
  const verifier = createVerifier({
    issuer: ISSUER,
    secret: SECRET,
    tokenCache: mode.endsWith('-cached') ? { max: 10_000 } : undefined,
    // The JWKS comes from memory: the benchmark measures verification, not the network.
    fetch: () => Promise.resolve(Response.json(jwks)),
  })
  app.use(bearer(verifier))
} else if (mode.startsWith('jose')) {
  const key = alg === 'HS256' ? secretKey : publicKey
  app.use(async (ctx, next) => {
    const header = ctx.get('authorization')
    try {
      const { payload } = await jwtVerify(header.slice(7), key, {
        issuer: ISSUER,
        algorithms: [alg],
      })
      ctx.state.auth = payload
    } catch {
      ctx.status = 401
      return
    }
    await next()
  })
}
app.use((ctx) => {
  ctx.body = { orders: [] }
})
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, token })}\n`,
  )
})
