import { lookup as dnsLookup } from 'node:dns'
import type { LookupAddress } from 'node:dns'
import { request as httpRequest } from 'node:http'
import type { IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

/** The `Accept` header of a JWK Set request. */
export const JWKS_ACCEPT = 'application/jwk-set+json, application/json'

/** Why a JWK Set could not be fetched; `message` is a short reason for the log. */
export class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError'
}

export interface FetchJwksOptions {
  /** The whole exchange, body included, ends within this many milliseconds. */
  timeoutMs: number
  /** A body past this many bytes is abandoned. */
  maxBytes: number
}

/**
 * GETs a JWK Set and returns its body parsed as JSON, or throws {@link JwksFetchError}.
 * Redirects are refused: the location of a client's keys is what its configuration says, and a
 * redirect could lead the server anywhere. Names under `.localhost` resolve to loopback, as RFC
 * 6761 §6.3 says they always do (the system resolver may not know them).
 */
export function fetchJwksDocument(uri: string, options: FetchJwksOptions): Promise<unknown> {
  const url = new URL(uri)
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const fail = (message: string, cause?: unknown): void => {
      clearTimeout(timer)
      req.destroy()
      reject(new JwksFetchError(message, { cause }))
    }
    const req = request(url, {
      method: 'GET',
      headers: { accept: JWKS_ACCEPT },
      lookup: isLocalhostName(url.hostname) ? loopbackLookup : undefined,
      agent: false,
    })
    const timer = setTimeout(
      () => fail(`timed out after ${options.timeoutMs} ms`),
      options.timeoutMs,
    )
    req.on('error', (error) => fail(`request failed: ${describe(error)}`, error))
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400) return fail(`redirect (${status}) refused`)
      if (status !== 200) return fail(`status ${status}`)
      if (Number(res.headers['content-length'] ?? '0') > options.maxBytes) {
        return fail(`body over ${options.maxBytes} bytes`)
      }
      const chunks: Buffer[] = []
      let total = 0
      res.on('data', (chunk: Buffer) => {
        total += chunk.byteLength
        if (total > options.maxBytes) fail(`body over ${options.maxBytes} bytes`)
        else chunks.push(chunk)
      })
      res.on('error', (error) => fail('body could not be read', error))
      res.on('end', () => {
        clearTimeout(timer)
        let text: string
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
        } catch (error) {
          return reject(new JwksFetchError('body is not UTF-8', { cause: error }))
        }
        try {
          resolve(JSON.parse(text) as unknown)
        } catch (error) {
          reject(new JwksFetchError('body is not JSON', { cause: error }))
        }
      })
    })
    req.end()
  })
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

function loopbackLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  if (!isLocalhostName(hostname)) {
    dnsLookup(hostname, options as never, callback as never)
    return
  }
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }])
  else callback(null, '127.0.0.1', 4)
}

/** The system error code and what it was about, never more: e.g. `ECONNREFUSED`. */
function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code)) return code
  return error instanceof Error ? error.message.slice(0, 200) : 'unknown error'
}
