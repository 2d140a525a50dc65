// Baseline: a bare Koa route that reads and parses the same JSON body as POST /token and
// answers a small JSON object. Prints its URL on stdout once listening.
import Koa from 'koa'
import getRawBody from 'raw-body'

const app = new Koa()
app.use(async (ctx) => {
  const body = JSON.parse(await getRawBody(ctx.req, { limit: 16384, encoding: 'utf-8' }))
  ctx.set('Cache-Control', 'no-store')
  ctx.body = { ok: typeof body.grant_type === 'string' }
})
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }))
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
