/**
 * Field schemas shared by the tenant schemas and the cross-document rules.
 *
 * @module
 */
import { isIPv6 } from 'node:net'
import * as z from 'zod'

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?'
// A DNS name (letters, digits, hyphens, dots; `localhost` and IPv4 literals are such names) or a
// bracketed IPv6 literal, then an optional port, as in the Host header (RFC 9110 §7.2). Written
// without regex flags so that it carries over into JSON Schema `pattern` unchanged.
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?$`)
const HOST_MESSAGE =
  'must be a host name (letters, digits, hyphens and dots, or an [IPv6] literal), optionally with :port'

/** `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, at most 63 characters: a DNS label, as Kubernetes names are. */
export const TENANT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** Any UUID version (RFC 9562 §4 layout), either case. */
export const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/** A portable environment variable name. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** HS256 secrets, JWT_SECRET and per-tenant ones alike. */
export const MIN_SECRET_LENGTH = 32

/** Client secrets, literal and `{env: VAR}` alike. */
export const MIN_CLIENT_SECRET_LENGTH = 16

export const TenantNameSchema = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(
    TENANT_NAME,
    'must be lower-case letters, digits and hyphens, starting and ending with a letter or digit',
  )

export const HostSchema = z
  .string()
  .regex(HOST, HOST_MESSAGE)
  .superRefine((host, ctx) => {
    const problem = hostProblem(host)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
  .toLowerCase()

export const ClientIdSchema = z.string().regex(UUID, 'must be a UUID').toLowerCase()

/** What the pattern cannot say: port range, label and name lengths, IPv6 syntax. */
function hostProblem(host: string): string | undefined {
  // The pattern has reported this one already.
  if (!HOST.test(host)) return undefined
  const bracketed = host.startsWith('[')
  const separator = host.indexOf(':', bracketed ? host.indexOf(']') : 0)
  const name = separator === -1 ? host : host.slice(0, separator)
  const port = separator === -1 ? undefined : Number(host.slice(separator + 1))
  if (bracketed && !isIPv6(name.slice(1, -1))) return HOST_MESSAGE
  if (!bracketed && (name.length > 253 || name.split('.').some((label) => label.length > 63))) {
    return 'must be a host name of at most 253 characters, 63 per label'
  }
  if (port !== undefined && !(port >= 1 && port <= 65535)) {
    return 'must have a port between 1 and 65535'
  }
  return undefined
}
