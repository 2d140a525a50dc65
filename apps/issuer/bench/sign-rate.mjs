// jose's signing rate on one core: for RS256, the physical ceiling of an RS256 token endpoint.
// `node sign-rate.mjs SECONDS [RS256|HS256]` prints {"perSecond": N, "cpuMicros": M}: signs per
// second of wall time, and CPU µs per sign (all threads), the signature's share of a grant's CPU
// time. Node signs RS256 on its threadpool, so one sign at a time would leave the core idle during
// every hand-over and understate the ceiling; as many signs are kept in flight as the issuer's
// benchmark keeps requests (BENCH_CONNECTIONS, default 10).
import { SignJWT, generateKeyPair } from 'jose'

const seconds = Number(process.argv[2] ?? 5)
const alg = process.argv[3] ?? 'RS256'
const key =
  alg === 'HS256'
    ? new TextEncoder().encode('bench-secret-0123456789-abcdefghijklmnop')
    : (await generateKeyPair('RS256', { modulusLength: 2048 })).privateKey
const claims = { iss: 'http://rs.bench', sub: 'bench-user', aud: 'http://rs.bench', scope: 'read' }
const sign = () =>
  new SignJWT(claims)
    .setProtectedHeader({ alg, typ: 'JWT', kid: '2026-01-01' })
    .setIssuedAt()
    .setExpirationTime('2h')
    .setJti(crypto.randomUUID())
    .sign(key)
const inFlight = Number(process.env.BENCH_CONNECTIONS ?? 10)
for (let i = 0; i < 50; i++) await sign()
let count = 0
const cpuBefore = process.cpuUsage()
const started = performance.now()
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    while (performance.now() - started < seconds * 1000) {
      await sign()
      count++
    }
  }),
)
const elapsed = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuBefore)
console.log(
  JSON.stringify({ perSecond: count / elapsed, cpuMicros: (cpu.user + cpu.system) / count }),
)
