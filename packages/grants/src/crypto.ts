import { createHash, randomBytes } from 'node:crypto'

/** 256 random bits, base64url: codes, refresh tokens, CSRF tokens (≥ 128 bits, RFC 6749 §10.10). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Hex SHA-256: how codes, refresh tokens and CSRF tokens are stored (DESIGN §8). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}
