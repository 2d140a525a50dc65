// jose's RS256 signing rate on one core: the physical ceiling of an RS256 token endpoint.
// Prints {"perSecond": N}.
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
for (let i = 0; i < 50; i++) await sign()
let count = 0
const started = performance.now()
while (performance.now() - started < seconds * 1000) {
  await sign()
  count++
}
console.log(JSON.stringify({ perSecond: count / ((performance.now() - started) / 1000) }))
