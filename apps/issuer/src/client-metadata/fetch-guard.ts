/**
 * GET of a URL that someone other than the operator chose: a client ID metadata document, or the
 * `jwks_uri` such a document names. The URL must not make the issuer reach into its own machine
 * or networks (server-side request forgery), however its host name resolves.
 *
 * @module
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupAddress } from 'node:dns'
import { request as httpRequest } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { classifyAddress, isLoopbackAddress } from './address-rules.js'

/** Why a guarded fetch failed: `message` is a short reason, fit for an error description. */
export class GuardedFetchError extends Error {
  override readonly name = 'GuardedFetchError'
}

export interface GuardedFetchOptions {
  /**
   * FETCH_ALLOW_PRIVATE_ADDRESSES: loopback, private and link-local addresses may be reached,
   * and http is allowed to loopback addresses. For development and tests only.
   */
  allowPrivateAddresses: boolean
  /** The whole exchange, body included, ends within this many milliseconds. */
  timeoutMs: number
  /** A body past this many bytes is abandoned, unread. */
  maxBytes: number
  /** The `Accept` header. */
  accept: string
  /** Tests: certificates trusted instead of the system's (certificates are always checked). */
  ca?: string[]
  /** Tests: the resolver (default: the system's, `dns.lookup`). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>
}

/** A 200 answer of a guarded fetch. */
export interface GuardedResponse {
  headers: IncomingHttpHeaders
  body: Buffer
}

/** 5 seconds, 5 KiB: what a client ID metadata document may take. */
export const DOCUMENT_FETCH_LIMITS = { timeoutMs: 5_000, maxBytes: 5 * 1024 } as const

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/**
 * GETs `url` and answers its 200 response, or throws {@link GuardedFetchError}.
 *
 * - https only; http only to a loopback address, and only with `allowPrivateAddresses`.
 * - The host name is resolved once, every address it resolves to is checked, and the
 *   connection is made to those checked addresses only: a name that resolves to a public
 *   address for a check and to a private one for the connection (DNS rebinding) cannot happen.
 *   TLS still verifies the certificate against the host name of the URL.
 * - No redirects: a 3xx answer is an error, as is any status but 200.
 * - `timeoutMs` for the whole exchange; the body is abandoned past `maxBytes`.
 */
export function guardedFetch(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return Promise.reject(new GuardedFetchError('not a URL'))
  }
  const plain = target.protocol === 'http:'
  if (target.protocol !== 'https:' && !(plain && options.allowPrivateAddresses)) {
    return Promise.reject(new GuardedFetchError('only https URLs are fetched'))
  }
  if (target.username !== '' || target.password !== '') {
    return Promise.reject(new GuardedFetchError('the URL must not hold a user name or password'))
  }
  const check = (address: string): GuardedFetchError | undefined => {
    if (plain && !isLoopbackAddress(address)) {
      return new GuardedFetchError(`http is allowed to loopback addresses only, not ${address}`)
    }
    const kind = classifyAddress(address)
    if (kind !== undefined && !options.allowPrivateAddresses) {
      return new GuardedFetchError(`${target.hostname} is a ${kind} address (${address}): refused`)
    }
    return undefined
  }
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1')
  // A literal address is connected to as is (no lookup happens): check it here.
  if (isIP(hostname) !== 0) {
    const refused = check(hostname)
    if (refused !== undefined) return Promise.reject(refused)
  }
  const resolve = options.resolve ?? ((name) => dnsLookup(name, { all: true, verbatim: true }))
  const lookup = (
    name: string,
    lookupOptions: { all?: boolean },
    callback: LookupCallback,
  ): void => {
    resolveChecked(name, resolve, check).then(
      (addresses) => {
        if (lookupOptions.all === true) callback(null, addresses)
        else callback(null, addresses[0]!.address, addresses[0]!.family)
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, []),
    )
  }
  return exchange(target, lookup, options)
}

/** Resolves `name` once and answers its addresses, all of them checked; throws on any refused. */
async function resolveChecked(
  name: string,
  resolve: (hostname: string) => Promise<LookupAddress[]>,
  check: (address: string) => GuardedFetchError | undefined,
): Promise<LookupAddress[]> {
  const bare = name.toLowerCase().replace(/\.$/, '')
  let addresses: LookupAddress[]
  if (bare === 'localhost' || bare.endsWith('.localhost')) {
    // RFC 6761 §6.3: always loopback, whatever a resolver says.
    addresses = [{ address: '127.0.0.1', family: 4 }]
  } else {
    try {
      addresses = await resolve(name)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new GuardedFetchError(`${name} could not be resolved (${safeCode(code)})`)
    }
  }
  if (addresses.length === 0) throw new GuardedFetchError(`${name} resolves to no address`)
  for (const { address } of addresses) {
    const refused = check(address)
    if (refused !== undefined) throw refused
  }
  return addresses
}

function exchange(
  target: URL,
  lookup: (name: string, options: { all?: boolean }, callback: LookupCallback) => void,
  options: GuardedFetchOptions,
): Promise<GuardedResponse> {
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (error: GuardedFetchError): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      reject(error)
    }
    const req = request(target, {
      method: 'GET',
      headers: { accept: options.accept },
      lookup: lookup,
      // A fresh connection each time: a pooled one may lead to an address checked for another URL.
      agent: false,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    })
    const timer = setTimeout(
      () => fail(new GuardedFetchError(`no complete answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    )
    req.on('error', (error) => {
      fail(
        error instanceof GuardedFetchError
          ? error
          : new GuardedFetchError(`the request failed (${safeCode(describe(error))})`),
      )
    })
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400) {
        return fail(new GuardedFetchError(`redirects are not followed (status ${status})`))
      }
      if (status !== 200) return fail(new GuardedFetchError(`status ${status}, not 200`))
      const tooLarge = `larger than ${options.maxBytes} bytes`
      if (Number(res.headers['content-length'] ?? '0') > options.maxBytes) {
        return fail(new GuardedFetchError(tooLarge))
      }
      const chunks: Buffer[] = []
      let total = 0
      res.on('data', (chunk: Buffer) => {
        total += chunk.byteLength
        if (total > options.maxBytes) fail(new GuardedFetchError(tooLarge))
        else chunks.push(chunk)
      })
      res.on('error', () => fail(new GuardedFetchError('the body could not be read')))
      res.on('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ headers: res.headers, body: Buffer.concat(chunks) })
      })
    })
    req.end()
  })
}

/** A system error code or TLS reason, e.g. `ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`. */
function describe(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException).code
  return typeof code === 'string' ? code : undefined
}

/** Only a code-shaped word reaches a message: never text a remote party chose. */
function safeCode(code: string | undefined): string {
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,60}$/.test(code) ? code : 'error'
}
