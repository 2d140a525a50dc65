// jose's RS256 signing rate on one core: the physical ceiling of an RS256 token endpoint.
// Prints {"perSecond": N}. Node signs on its threadpool, so one sign at a time would leave the
// core idle during every hand-over and understate the ceiling; as many signs are kept in flight
// as the issuer's benchmark keeps requests (BENCH_CONNECTIONS, default 10).
import { SignJWT, generateKeyPair } from 'jose'

const seconds = Number(process.argv[2] ?? 5)
const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048 })
const claims = { iss: 'http://rs.bench', sub: 'bench-user', aud: 'http://rs.bench', scope: 'read' }
const sign = () =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: '2026-01-01' })
    .setIssuedAt()
    .setExpirationTime('2h')
    .setJti(crypto.randomUUID())
    .sign(privateKey)
const inFlight = Number(process.env.BENCH_CONNECTIONS ?? 10)
for (let i = 0; i < 50; i++) await sign()
let count = 0
const started = performance.now()
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    while (performance.now() - started < seconds * 1000) {
      await sign()
      count++
    }
  }),
)
console.log(JSON.stringify({ perSecond: count / ((performance.now() - started) / 1000) }))
