import * as crypto from 'node:crypto'

const TOKEN_BYTES = 32
// Random bytes are drawn from the CSPRNG a batch at a time, as node:crypto's randomUUID does:
// one call per 128 tokens instead of one per token, which cost more than hashing the token.
const POOL_TOKENS = 128
let pool = Buffer.alloc(0)
let offset = 0

/** 256 random bits, base64url: codes, refresh tokens, CSRF tokens (≥ 128 bits, RFC 6749 §10.10). */
export function randomToken(): string {
  if (offset + TOKEN_BYTES > pool.length) {
    pool = crypto.randomBytes(TOKEN_BYTES * POOL_TOKENS)
    offset = 0
  }
  const token = pool.toString('base64url', offset, offset + TOKEN_BYTES)
  // Each byte serves one token only; wiping it keeps issued tokens out of the pool's memory.
  pool.fill(0, offset, offset + TOKEN_BYTES)
  offset += TOKEN_BYTES
  return token
}

// crypto.hash (Node ≥ 20.12) hashes in one call, without a Hash object: twice as fast for
// inputs this short. @types/node declares it on every Node 20; older 20.x lack it at runtime.
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined

/** Hex SHA-256: how codes, refresh tokens and CSRF tokens are stored. */
export function sha256Hex(value: string): string {
  return oneShot === undefined
    ? crypto.createHash('sha256').update(value).digest('hex')
    : oneShot('sha256', value, 'hex')
}

/** Raw SHA-256 of a string's UTF-8 bytes. */
export function sha256(value: string): Buffer {
  return oneShot === undefined
    ? crypto.createHash('sha256').update(value).digest()
    : oneShot('sha256', value, 'buffer')
}
