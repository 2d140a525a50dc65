import { lookup as dnsLookup } from 'node:dns'
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns'
import { Agent } from 'undici'
import type { FetchLike } from '../options.js'

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

const LOOPBACK: readonly LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
]

/**
 * Whether `hostname` (as `URL.hostname` spells it, lower case) is `localhost` or under
 * `.localhost`, which RFC 6761 §6.3 reserves for the loopback interface.
 */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
  return name === 'localhost' || name.endsWith('.localhost')
}

/**
 * A `dns.lookup` that answers loopback addresses for localhost names without asking the system
 * resolver: RFC 6761 §6.3 says these names always mean loopback, and curl and browsers resolve
 * them so, but glibc and Node do not (`acme.localhost` is ENOTFOUND).
 */
export function loopbackLookup(
  hostname: string,
  options: LookupOneOptions | LookupAllOptions,
  callback: LookupCallback,
): void {
  if (!isLocalhostName(hostname.toLowerCase())) {
    // The agent only connects to localhost names; this is for completeness.
    ;(dnsLookup as (name: string, opts: object, cb: LookupCallback) => void)(
      hostname,
      options,
      callback,
    )
    return
  }
  const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family
  const addresses = LOOPBACK.filter((entry) => !family || entry.family === family)
  if (options.all === true) {
    callback(null, addresses)
    return
  }
  const first = addresses[0] ?? LOOPBACK[0]!
  callback(null, first.address, first.family)
}

// Created on first use, so that importing the verifier opens nothing, and shared: it only
// holds keep-alive connections to loopback.
let loopbackAgent: Agent | undefined

/**
 * The verifier's fetch when none is given: `globalThis.fetch` (looked up at each call, so that
 * a fetch installed later is used), with localhost names resolved to loopback through a
 * dispatcher of its own. Other hosts go through `globalThis.fetch` untouched, and nothing
 * global is changed.
 */
export const defaultFetch: FetchLike = (url, init) => {
  if (!isLocalhostName(new URL(url).hostname)) return globalThis.fetch(url, init)
  loopbackAgent ??= new Agent({ connect: { lookup: loopbackLookup } })
  // `dispatcher` is undici's extension of RequestInit: Node's fetch is undici's.
  return globalThis.fetch(url, { ...init, dispatcher: loopbackAgent })
}
