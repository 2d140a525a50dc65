/**
 * The value schemas of the settings: each reads one environment variable's text. Messages never
 * repeat the value (settings problems are printed, and some values are secrets).
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import * as z from 'zod'
import { MIN_SECRET_LENGTH } from './fields.js'

/** The most WORKERS accepted: beyond it, more processes only add memory and store connections. */
export const MAX_WORKERS = 64

/**
 * Where Kubernetes mounts the namespace of a pod's service account: the default of
 * TESSERA_KUBERNETES_NAMESPACE when the issuer runs in a cluster.
 */
export const SERVICE_ACCOUNT_NAMESPACE_FILE =
  '/var/run/secrets/kubernetes.io/serviceaccount/namespace'

/** A namespace name is a DNS label (RFC 1123), as Kubernetes validates it. */
const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/

/**
 * RFC 6750 §2.1 b64token: what can follow `Bearer ` in an Authorization header. A token outside
 * it (a space, a trailing newline from a file) could never be sent, so it is refused at start.
 */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/
const INTEGER = /^\d+$/
const TRUST_PROXY_MESSAGE = 'must be false or the number of proxies in front (1, 2, …)'
const BOOLEANS: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
}

/** A decimal number in a range; the message never repeats the value. */
export function number(options: { integer: boolean; min: number; max?: number; message: string }) {
  return z.string().transform((text, ctx) => {
    const value = (options.integer ? INTEGER : DECIMAL).test(text) ? Number(text) : Number.NaN
    if (!(value >= options.min && value <= (options.max ?? Number.MAX_SAFE_INTEGER))) {
      ctx.addIssue({ code: 'custom', message: options.message })
      return z.NEVER
    }
    return value
  })
}

/** An integer from `min` to `max`, refused as "must be an integer between min and max". */
export const integerBetween = (min: number, max: number) =>
  number({ integer: true, min, max, message: `must be an integer between ${min} and ${max}` })

export const positiveNumber = () =>
  number({ integer: false, min: Number.MIN_VALUE, message: 'must be a positive number' })

export const positiveInteger = () =>
  number({ integer: true, min: 1, message: 'must be a positive integer' })

export const boolean = () =>
  z.string().transform((text, ctx) => {
    const value = BOOLEANS[text.toLowerCase()]
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be one of true, false, 1, 0, yes, no' })
      return z.NEVER
    }
    return value
  })

/** A secret of at least {@link MIN_SECRET_LENGTH} characters. */
export const secret = () =>
  z.string().min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`)

/**
 * TRUST_PROXY: `false` (or `0`) or a count of proxies. A yes/no value is refused rather than
 * guessed: trusting "every proxy" means taking the left-most X-Forwarded-For entry, which the
 * client writes, so the message for `true` names the count to give instead.
 */
export const proxyCount = () =>
  z.string().transform((text, ctx): false | number => {
    const value = text.trim().toLowerCase()
    if (value === 'false' || value === '0') return false
    if (INTEGER.test(value) && Number(value) <= Number.MAX_SAFE_INTEGER) return Number(value)
    ctx.addIssue({
      code: 'custom',
      message: ['true', 'yes', 'on'].includes(value)
        ? `${TRUST_PROXY_MESSAGE}; true is no longer accepted: give the number of proxies that append to X-Forwarded-For, e.g. TRUST_PROXY=1`
        : TRUST_PROXY_MESSAGE,
    })
    return z.NEVER
  })

/** ADMIN_PORT: a port, 0 for any free one, or `off`. */
export const adminPort = () =>
  z.string().transform((text, ctx): number | 'off' => {
    if (text.trim().toLowerCase() === 'off') return 'off'
    const value = INTEGER.test(text) ? Number(text) : Number.NaN
    if (!(value >= 0 && value <= 65535)) {
      ctx.addIssue({ code: 'custom', message: 'must be off or an integer between 0 and 65535' })
      return z.NEVER
    }
    return value
  })

/** WORKERS: a count, or `auto` (kept as is: the normalize step resolves it on this machine). */
export const workerCount = () =>
  z.string().transform((text, ctx): number | 'auto' => {
    const value = text.trim().toLowerCase()
    if (value === 'auto') return 'auto'
    const count = INTEGER.test(value) ? Number(value) : Number.NaN
    if (!(count >= 1 && count <= MAX_WORKERS)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be auto or an integer between 1 and ${MAX_WORKERS}`,
      })
      return z.NEVER
    }
    return count
  })

/**
 * ADMIN_TOKEN: one problem at a time, the length first; the messages never repeat the value
 * (settings problems are printed, and this is a secret).
 */
export const adminToken = () =>
  z.string().check((ctx) => {
    const { value } = ctx
    if (value.length < MIN_SECRET_LENGTH) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be at least ${MIN_SECRET_LENGTH} characters`,
      })
    } else if (!BEARER_TOKEN.test(value)) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message:
          'must be letters, digits and - . _ ~ + / (then = padding only), as a bearer token is ' +
          'sent (RFC 6750 §2.1); e.g. openssl rand -base64 32',
      })
    }
  })

/** TESSERA_KUBERNETES_NAMESPACE: a Kubernetes namespace name. */
export const namespace = () =>
  z
    .string()
    .max(63, 'must be at most 63 characters')
    .regex(
      NAMESPACE,
      'must be a namespace name: lower-case letters, digits and hyphens, starting and ending with a letter or digit',
    )

/** An environment variable: an empty value counts as unset. */
export function variable<Schema extends z.ZodType<unknown, string | undefined>>(schema: Schema) {
  return z
    .string()
    .optional()
    .transform((text) => (text === '' ? undefined : text))
    .pipe(schema)
}

/** The namespace of the pod's service account, when running in a cluster. */
export function readServiceAccountNamespace(): string | undefined {
  let text: string
  try {
    text = readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8')
  } catch {
    // Outside a cluster (or without an automounted token): no file, no namespace.
    return undefined
  }
  const namespace = text.trim()
  return NAMESPACE.test(namespace) ? namespace : undefined
}
