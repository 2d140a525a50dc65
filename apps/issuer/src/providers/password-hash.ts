import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>

// N = 2^14, r = 8 (16 MiB per check): Node's own default cost, about 40 ms on one core here.
const DEFAULT_LOG_N = 14
const R = 8
const P = 1
const KEY_LENGTH = 32
const FORMAT =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

/**
 * Hashes a password with scrypt into a PHC-style string:
 * `$scrypt$ln=14,r=8,p=1$<salt>$<hash>` (base64 without padding).
 */
export async function hashPassword(password: string, logN = DEFAULT_LOG_N): Promise<string> {
  const salt = randomBytes(16)
  const hash = await derive(password, salt, logN, R, P)
  return `$scrypt$ln=${logN},r=${R},p=${P}$${b64(salt)}$${b64(hash)}`
}

// A hash of nothing in particular: checking against it when a user does not exist costs the
// same time as a real check, so response times do not tell which usernames exist.
const DUMMY_HASH = `$scrypt$ln=${DEFAULT_LOG_N},r=${R},p=${P}$${b64(Buffer.alloc(16))}$${b64(Buffer.alloc(KEY_LENGTH))}`

/**
 * Checks a password against a hash made by {@link hashPassword}, in constant time. Pass
 * `undefined` for an unknown user: the same work is done and the answer is false.
 */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const match = FORMAT.exec(hash ?? DUMMY_HASH)
  if (!match) return false
  const [, logN, r, p, salt, expected] = match
  const expectedBytes = Buffer.from(expected!, 'base64')
  if (expectedBytes.length !== KEY_LENGTH || Number(logN) > 20) return false
  const actual = await derive(
    password,
    Buffer.from(salt!, 'base64'),
    Number(logN),
    Number(r),
    Number(p),
  )
  return timingSafeEqual(actual, expectedBytes) && hash !== undefined
}

function derive(
  password: string,
  salt: Buffer,
  logN: number,
  r: number,
  p: number,
): Promise<Buffer> {
  const N = 2 ** logN
  return scryptAsync(password.normalize('NFC'), salt, KEY_LENGTH, {
    N,
    r,
    p,
    maxmem: 256 * N * r,
  })
}

function b64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '')
}
