import { randomBytes } from 'node:crypto'
import { EncryptJWT, errors, jwtDecrypt } from 'jose'
import * as z from 'zod'
import type { SecretStore } from '../ports.js'

/** The name under which every replica finds the one key that seals login forms. */
const SECRET_NAME = 'login-seal'
const KEY_BYTES = 32

/** The signed-in user a consent form is for, as the sign-in established them. */
export interface SealedUser {
  sub: string
  claims: Record<string, unknown>
  /** OpenID Connect: the session the sign-in started or rode, and when the user authenticated. */
  signIn?: { authTime: number; sid: string }
}

/**
 * A pending sign-in as the login form carries it: what /authorize validated, the browser it was
 * shown to, and until when it may be posted. Nothing of it is stored before the form comes back.
 */
export interface SealedLogin {
  /** Random; the single-use mark is set on it when the form is posted. */
  id: string
  tenant: string
  clientId: string
  redirectUri: string
  /** Granted scopes, space-separated. */
  scope: string
  state?: string
  codeChallenge?: string
  /** OpenID Connect: the request's nonce. */
  nonce?: string
  /** The resources (RFC 8707) the request named, as configured. */
  resources?: string[]
  /** The request's `dpop_jkt` (RFC 9449 §10). */
  dpopJkt?: string
  /** A "Continue as …" form: the `sid` of the session whose user it names. */
  sid?: string
  /** The request's `prompt` held `consent`: a remembered consent does not count. */
  promptConsent?: true
  /** A consent form: the user who signed in, who alone may answer it. */
  user?: SealedUser
  /** base64url SHA-256 of the binding cookie's value. */
  bindingHash: string
  /** Epoch milliseconds, a whole second. */
  expiresAt: number
}

// Short claim names keep the form small; `jti` and `exp` are the JWT ones, which jose checks.
const ClaimsSchema = z.object({
  jti: z.string().min(1),
  exp: z.number().int().positive(),
  tnt: z.string(),
  cid: z.string(),
  ruri: z.string(),
  scp: z.string(),
  st: z.string().optional(),
  cc: z.string().optional(),
  nc: z.string().optional(),
  sid: z.string().optional(),
  rsc: z.array(z.string()).optional(),
  jkt: z.string().optional(),
  pc: z.literal(true).optional(),
  usr: z
    .object({
      sub: z.string().min(1),
      cl: z.record(z.string(), z.unknown()),
      at: z.number().int().nonnegative().optional(),
      sid: z.string().min(1).optional(),
    })
    .optional(),
  bnd: z.string(),
})

const keys = new WeakMap<SecretStore, Promise<Uint8Array>>()

function decodeKey(value: string): Uint8Array {
  const key = Buffer.from(value, 'base64url')
  if (key.length !== KEY_BYTES || key.toString('base64url') !== value) {
    throw new TypeError(`the stored ${SECRET_NAME} secret is not ${KEY_BYTES} bytes of base64url`)
  }
  return key
}

/**
 * The sealing key, read (or created) once per process and store. Every replica must open what
 * another sealed, so the key is the store's and never a per-process random one. A failed read
 * is not remembered: the next form tries again.
 */
export function loginSealKey(secrets: SecretStore): Promise<Uint8Array> {
  let key = keys.get(secrets)
  if (key === undefined) {
    const candidate = randomBytes(KEY_BYTES).toString('base64url')
    key = secrets.getOrCreateSecret(SECRET_NAME, candidate).then(decodeKey)
    keys.set(secrets, key)
    const pending = key
    pending.catch(() => {
      if (keys.get(secrets) === pending) keys.delete(secrets)
    })
  }
  return key
}

function userClaim(user: SealedUser): Record<string, unknown> {
  return {
    sub: user.sub,
    cl: user.claims,
    ...(user.signIn === undefined ? {} : { at: user.signIn.authTime, sid: user.signIn.sid }),
  }
}

function sealedUser(usr: {
  sub: string
  cl: Record<string, unknown>
  at?: number | undefined
  sid?: string | undefined
}): SealedUser {
  return {
    sub: usr.sub,
    claims: usr.cl,
    ...(usr.at === undefined || usr.sid === undefined
      ? {}
      : { signIn: { authTime: usr.at, sid: usr.sid } }),
  }
}

/** Encrypts a pending sign-in (JWE, dir + A256GCM): the browser can neither read nor alter it. */
export function sealLogin(login: SealedLogin, key: Uint8Array): Promise<string> {
  return new EncryptJWT({
    tnt: login.tenant,
    cid: login.clientId,
    ruri: login.redirectUri,
    scp: login.scope,
    ...(login.state === undefined ? {} : { st: login.state }),
    ...(login.codeChallenge === undefined ? {} : { cc: login.codeChallenge }),
    ...(login.nonce === undefined ? {} : { nc: login.nonce }),
    ...(login.sid === undefined ? {} : { sid: login.sid }),
    ...(login.resources === undefined ? {} : { rsc: login.resources }),
    ...(login.dpopJkt === undefined ? {} : { jkt: login.dpopJkt }),
    ...(login.promptConsent === true ? { pc: true } : {}),
    ...(login.user === undefined ? {} : { usr: userClaim(login.user) }),
    bnd: login.bindingHash,
  })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setJti(login.id)
    .setExpirationTime(Math.floor(login.expiresAt / 1000))
    .encrypt(key)
}

/**
 * Opens a sealed sign-in of `tenant`; undefined when it was forged, altered, sealed under
 * another key or for another tenant, or has expired at `now` (epoch milliseconds).
 */
export async function openLogin(
  sealed: string,
  tenant: string,
  key: Uint8Array,
  now: number,
): Promise<SealedLogin | undefined> {
  let payload: unknown
  try {
    ;({ payload } = await jwtDecrypt(sealed, key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(now),
    }))
  } catch (error) {
    // Every malformed, forged or expired form is a JOSEError; anything else is a fault here.
    if (error instanceof errors.JOSEError) return undefined
    throw error
  }
  const claims = ClaimsSchema.safeParse(payload)
  if (!claims.success || claims.data.tnt !== tenant) return undefined
  const { jti, exp, tnt, cid, ruri, scp, st, cc, nc, sid, rsc, jkt, pc, usr, bnd } = claims.data
  return {
    id: jti,
    tenant: tnt,
    clientId: cid,
    redirectUri: ruri,
    scope: scp,
    ...(st === undefined ? {} : { state: st }),
    ...(cc === undefined ? {} : { codeChallenge: cc }),
    ...(nc === undefined ? {} : { nonce: nc }),
    ...(sid === undefined ? {} : { sid }),
    ...(rsc === undefined ? {} : { resources: rsc }),
    ...(jkt === undefined ? {} : { dpopJkt: jkt }),
    ...(pc === undefined ? {} : { promptConsent: pc }),
    ...(usr === undefined ? {} : { user: sealedUser(usr) }),
    bindingHash: bnd,
    expiresAt: exp * 1000,
  }
}
