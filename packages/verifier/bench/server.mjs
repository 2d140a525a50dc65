// One benchmark server: `node server.mjs <mode> [jkt]` listens on 127.0.0.1 and prints one JSON
// line `{ url, token }`. Modes: open (no auth), bearer-hs, bearer-rs, bearer-rs-cached,
// bearer-hs-cached (this package's Koa adapter), bearer-rs-dpop (an RS256 token bound to the
// DPoP key with thumbprint `jkt`, DPoP on, token cache off), jose-hs, jose-rs (jose's jwtVerify
// in a bare Koa middleware, the baseline; see fixtures.mjs).
import Koa from 'koa'
import { bearer } from '../dist/koa.js'
import { benchVerifier, boundToken, joseMiddleware, tokens } from './fixtures.mjs'

const mode = process.argv[2] ?? 'open'
const alg = mode.endsWith('-hs') || mode === 'bearer-hs-cached' ? 'HS256' : 'RS256'
const dpop = mode === 'bearer-rs-dpop'
const token = dpop ? await boundToken(process.argv[3]) : tokens[alg]

const app = new Koa()
if (mode.startsWith('bearer')) {
  app.use(bearer(benchVerifier(mode.endsWith('-cached'), dpop)))
} else if (mode.startsWith('jose')) {
  app.use(joseMiddleware(alg))
}
app.use((ctx) => {
  ctx.body = { orders: [] }
})
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, token })}\n`,
  )
})
