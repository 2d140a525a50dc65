// `node bench/primitives.mjs`: what the basic operations of a token request cost on this
// machine, in µs, in process — a system call, a 4 KiB file write, SHA-256, HMAC-SHA256 with a key
// object, jose's HS256 signature, 32 random bytes. The issuer does more of these per request
// than the bare Koa baseline does, so where they are dear (a virtual machine whose system calls
// and crypto calls cost several µs) the ratios of `pnpm bench` fall, whatever the issuer's code.
// Run it beside `pnpm bench` when comparing machines. Pinned to core 0 when taskset exists.
import { spawnSync } from 'node:child_process'
import { createHash, createHmac, createSecretKey, hash, randomBytes } from 'node:crypto'
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompactSign } from 'jose'

if (process.env.BENCH_PINNED !== '1' && spawnSync('taskset', ['-c', '0', 'true']).status === 0) {
  const result = spawnSync('taskset', ['-c', '0', process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  })
  process.exit(result.status ?? 1)
}

const dir = mkdtempSync(join(tmpdir(), 'tessera-primitives-'))
const fd = openSync(join(dir, 'file'), 'w')
const page = Buffer.alloc(4096, 1)
const key = createSecretKey(Buffer.from('bench-secret-0123456789-abcdefghijklmnop'))
const input = 'x'.repeat(400)
const claims = new TextEncoder().encode(
  JSON.stringify({ iss: 'http://hs.bench', sub: 'u', aud: 'a', exp: 2e9, iat: 1e9, jti: 'j' }),
)
const header = { alg: 'HS256', typ: 'JWT' }

/** Median µs per call over 5 rounds of `calls` calls, after a warm-up. */
async function measure(run, calls = 20_000) {
  for (let i = 0; i < calls / 10; i++) await run(i)
  const rounds = []
  for (let round = 0; round < 5; round++) {
    const started = performance.now()
    for (let i = 0; i < calls; i++) await run(i)
    rounds.push(((performance.now() - started) * 1000) / calls)
  }
  return rounds.sort((a, b) => a - b)[2]
}

try {
  const rows = [
    ['a system call (fstat)', () => fstatSync(fd)],
    ['a 4 KiB write at an offset (pwrite)', (i) => writeSync(fd, page, 0, 4096, (i % 64) * 4096)],
    ['SHA-256 of 400 bytes, crypto.hash', () => hash('sha256', input, 'hex')],
    ['SHA-256 of 400 bytes, createHash', () => createHash('sha256').update(input).digest('hex')],
    [
      'HMAC-SHA256 of 400 bytes, key object',
      () => createHmac('sha256', key).update(input).digest(),
    ],
    ['jose HS256 CompactSign', () => new CompactSign(claims).setProtectedHeader(header).sign(key)],
    ['32 random bytes (randomBytes)', () => randomBytes(32)],
  ]
  console.log(`Node ${process.version}, median of 5 rounds\n`)
  console.log('| operation | µs per call |')
  console.log('|---|---:|')
  for (const [name, run] of rows) console.log(`| ${name} | ${(await measure(run)).toFixed(2)} |`)
} finally {
  closeSync(fd)
  rmSync(dir, { recursive: true, force: true })
}
