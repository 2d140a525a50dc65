import { createPublicKey } from 'node:crypto'
import { SignJWT, generateKeyPair } from 'jose'
import type { JWTPayload } from 'jose'
import type { VerifierErrorCode } from '../../src/index.js'
import { claims, publicPem, rawToken, signHs256, signRs256, SECRET } from './keys.js'
import type { TestKey } from './keys.js'

export const AUDIENCE = 'https://api.test'

/** One hostile or broken token and the code the verifier must refuse it with. */
export interface Attack {
  name: string
  token: string
  code: VerifierErrorCode
  /**
   * Through an adapter: 400 `invalid_request` when the token is not even an RFC 6750
   * `b64token`, so that the Authorization header itself is malformed. Default 401.
   */
  httpStatus?: 400
}

/** A valid token next to the attacks: tolerance edges that must pass. */
export interface Valid {
  name: string
  token: string
}

function tamper(token: string, change: (payload: JWTPayload) => JWTPayload): string {
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as JWTPayload
  return `${header}.${Buffer.from(JSON.stringify(change(decoded))).toString('base64url')}.${signature}`
}

/**
 * The attack tokens of issue 4, for an issuer `iss` whose JWKS holds `key`, at `nowSeconds`,
 * against a verifier with the test secret, audience {@link AUDIENCE} and clockTolerance 5.
 * `elsewhere` is a URL on a server that counts its requests: headers point there.
 */
export async function buildAttacks(
  iss: string,
  key: TestKey,
  nowSeconds: number,
  elsewhere: string,
): Promise<{ attacks: Attack[]; valid: Valid[] }> {
  const good = claims(iss, nowSeconds)
  const valid = await signRs256(key, good)
  const pem = publicPem(key)
  const der = createPublicKey(pem).export({ type: 'spki', format: 'der' })
  const ec = await generateKeyPair('ES256')
  const rs384 = await new SignJWT(good)
    .setProtectedHeader({ alg: 'RS384', typ: 'JWT', kid: key.kid })
    .sign(key.privateKey)
  const es256 = await new SignJWT(good)
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: key.kid })
    .sign(ec.privateKey)
  const hs512 = await new SignJWT(good)
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .sign(new TextEncoder().encode(SECRET))
  const [validHeader, validPayload, validSignature] = valid.split('.') as [string, string, string]
  const withKid = (kid: unknown) => signRs256(key, good, { kid })
  const attacks: Attack[] = [
    {
      name: 'alg none, empty signature',
      token: rawToken({ alg: 'none', typ: 'JWT' }, good, ''),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'alg none',
      token: rawToken({ alg: 'none', typ: 'JWT' }, good),
      code: 'ERR_ALG_NOT_ALLOWED',
    },
    {
      name: 'alg NONE',
      token: rawToken({ alg: 'NONE', typ: 'JWT' }, good),
      code: 'ERR_ALG_NOT_ALLOWED',
    },
    { name: 'alg nOnE', token: rawToken({ alg: 'nOnE' }, good), code: 'ERR_ALG_NOT_ALLOWED' },
    {
      name: 'alg missing',
      token: rawToken({ typ: 'JWT', kid: key.kid }, good),
      code: 'ERR_ALG_NOT_ALLOWED',
    },
    {
      name: 'alg not a string',
      token: rawToken({ alg: ['RS256'], kid: key.kid }, good),
      code: 'ERR_ALG_NOT_ALLOWED',
    },
    {
      name: 'HS256 with the RSA public key as PEM',
      token: await signHs256(good, new TextEncoder().encode(pem), { kid: key.kid }),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'HS256 with the PEM and extra whitespace',
      token: await signHs256(
        good,
        new TextEncoder().encode(`\n${pem.replace(/\n/g, '\r\n')}  \n`),
        { kid: key.kid },
      ),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'HS256 with the PEM without trailing newline',
      token: await signHs256(good, new TextEncoder().encode(pem.trim())),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'HS256 with the DER public key',
      token: await signHs256(good, new Uint8Array(der), { kid: key.kid }),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'HS256 with the JWK as JSON',
      token: await signHs256(good, new TextEncoder().encode(JSON.stringify(key.jwk)), {
        kid: key.kid,
      }),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'HS256 with the modulus n',
      token: await signHs256(good, new TextEncoder().encode(String(key.jwk.n))),
      code: 'ERR_TOKEN_INVALID',
    },
    { name: 'RS384', token: rs384, code: 'ERR_ALG_NOT_ALLOWED' },
    { name: 'ES256', token: es256, code: 'ERR_ALG_NOT_ALLOWED' },
    { name: 'HS512', token: hs512, code: 'ERR_ALG_NOT_ALLOWED' },
    {
      name: 'RS256 without kid',
      token: await signRs256(key, good, { kid: undefined }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'kid with ../',
      token: await withKid('../../../etc/passwd'),
      code: 'ERR_TOKEN_MALFORMED',
    },
    { name: 'kid as a URL', token: await withKid(elsewhere), code: 'ERR_TOKEN_MALFORMED' },
    {
      name: 'kid of 200 characters',
      token: await withKid('k'.repeat(200)),
      code: 'ERR_TOKEN_MALFORMED',
    },
    { name: 'kid of 10 kB', token: await withKid('k'.repeat(10_000)), code: 'ERR_TOKEN_TOO_LONG' },
    { name: 'kid as a number', token: await withKid(20261122), code: 'ERR_TOKEN_MALFORMED' },
    { name: 'kid as null', token: await withKid(null), code: 'ERR_TOKEN_MALFORMED' },
    {
      name: 'kid with a quote and a backslash',
      token: await withKid('a"b\\c'),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'jku pointing elsewhere',
      token: await signRs256(key, good, { jku: elsewhere }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'x5u pointing elsewhere',
      token: await signRs256(key, good, { x5u: elsewhere }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'embedded jwk of the attacker',
      token: await signRs256(key, good, { jwk: key.jwk }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'x5c chain',
      token: await signRs256(key, good, { x5c: ['MIIB'] }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'unknown crit',
      token: await signRs256(key, good, { crit: ['urn:example:ext'], 'urn:example:ext': 1 }),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'malformed crit',
      token: rawToken({ alg: 'RS256', kid: key.kid, crit: 'exp' }, good),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'b64 false',
      token: rawToken({ alg: 'RS256', kid: key.kid, b64: false, crit: ['b64'] }, good),
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'expired beyond the tolerance',
      token: await signRs256(key, { ...good, exp: nowSeconds - 6 }),
      code: 'ERR_TOKEN_EXPIRED',
    },
    {
      name: 'nbf just outside the tolerance',
      token: await signRs256(key, { ...good, nbf: nowSeconds + 6 }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'iat in the future',
      token: await signRs256(key, { ...good, iat: nowSeconds + 600 }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'exp missing',
      token: await signRs256(key, { ...good, exp: undefined }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'exp not a number',
      token: await signRs256(key, { ...good, exp: String(nowSeconds + 60) as unknown as number }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'wrong iss',
      token: await signRs256(key, { ...good, iss: 'https://evil.example' }),
      code: 'ERR_ISSUER_UNKNOWN',
    },
    {
      name: 'iss missing',
      token: await signRs256(key, { ...good, iss: undefined }),
      code: 'ERR_ISSUER_UNKNOWN',
    },
    {
      name: 'iss with a trailing slash',
      token: await signRs256(key, { ...good, iss: `${iss}/` }),
      code: 'ERR_ISSUER_UNKNOWN',
    },
    {
      name: 'wrong aud',
      token: await signRs256(key, { ...good, aud: 'https://other.test' }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'aud missing',
      token: await signRs256(key, { ...good, aud: undefined }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'scope not a string',
      token: await signRs256(key, { ...good, scope: ['admin'] }),
      code: 'ERR_CLAIM_INVALID',
    },
    // An ID token signed by the issuer's own key is no access token.
    ...(await Promise.all(
      ['nonce', 'at_hash', 'azp'].map(async (claim) => ({
        name: `an ID token (${claim})`,
        token: await signRs256(key, { ...good, [claim]: 'x' }),
        code: 'ERR_CLAIM_INVALID' as const,
      })),
    )),
    {
      name: 'HS256 ID token (nonce)',
      token: await signHs256({ ...good, nonce: 'n' }),
      code: 'ERR_CLAIM_INVALID',
    },
    {
      name: 'tampered payload',
      token: tamper(valid, (p) => ({ ...p, scope: 'read write admin' })),
      code: 'ERR_TOKEN_INVALID',
    },
    {
      name: 'tampered header',
      token: `${rawToken({ alg: 'RS256', typ: 'JWT', kid: key.kid, x: 1 }, {}).split('.')[0]}.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_INVALID',
    },
    { name: 'truncated signature', token: valid.slice(0, -10), code: 'ERR_TOKEN_INVALID' },
    {
      name: 'signature removed',
      token: `${validHeader}.${validPayload}.`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    { name: 'two segments', token: `${validHeader}.${validPayload}`, code: 'ERR_TOKEN_MALFORMED' },
    { name: 'four segments', token: `${valid}.${validSignature}`, code: 'ERR_TOKEN_MALFORMED' },
    {
      name: 'a 1 MB token',
      token: `${validHeader}.${'A'.repeat(1_048_576)}.${validSignature}`,
      code: 'ERR_TOKEN_TOO_LONG',
    },
    {
      name: 'header a JSON array',
      token: `${Buffer.from('[]').toString('base64url')}.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'header a JSON string',
      token: `${Buffer.from('"RS256"').toString('base64url')}.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'header null',
      token: `${Buffer.from('null').toString('base64url')}.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'header not JSON',
      token: `${Buffer.from('{alg:RS256}').toString('base64url')}.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'payload not an object',
      token: `${validHeader}.${Buffer.from('42').toString('base64url')}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
    },
    {
      name: 'segment with padding',
      token: `${validHeader}=.${validPayload}.${validSignature}`,
      code: 'ERR_TOKEN_MALFORMED',
      httpStatus: 400,
    },
    { name: 'not a JWT at all', token: 'deadbeef', code: 'ERR_TOKEN_MALFORMED' },
  ]
  const validTokens: Valid[] = [
    { name: 'a plain RS256 token', token: valid },
    {
      name: 'an HS256 token with a kid it ignores',
      token: await signHs256(good, SECRET, { kid: '../../whatever' }),
    },
    {
      name: 'exp just inside the tolerance',
      token: await signRs256(key, { ...good, exp: nowSeconds - 4 }),
    },
    {
      name: 'nbf just inside the tolerance',
      token: await signRs256(key, { ...good, nbf: nowSeconds + 4 }),
    },
    {
      name: 'aud as an array',
      token: await signRs256(key, { ...good, aud: ['https://x.test', AUDIENCE] }),
    },
  ]
  return { attacks, valid: validTokens }
}
