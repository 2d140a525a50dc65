/**
 * Which IP addresses the issuer may connect to when it fetches a URL that someone other than
 * the operator chose (a client ID metadata document, the `jwks_uri` it names). Anything that
 * reaches the issuer's own machine or its private networks is refused: such a URL would turn
 * the issuer into a proxy into them (server-side request forgery).
 *
 * @module
 */
import { isIP } from 'node:net'

/** Why an address is refused, or undefined when it is a public unicast address. */
export type AddressClass =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'reserved'

interface V4Range {
  base: number
  bits: number
  kind: AddressClass
}

const v4 = (dotted: string, bits: number, kind: AddressClass): V4Range => ({
  base: parseV4(dotted)!,
  bits,
  kind,
})

// RFC 6890 special-purpose ranges that are not globally reachable unicast.
const V4_RANGES: readonly V4Range[] = [
  v4('0.0.0.0', 8, 'unspecified'), // "this network"; 0.0.0.0 reaches the local host
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared (CGNAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('198.51.100.0', 24, 'reserved'),
  v4('203.0.113.0', 24, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'), // and 255.255.255.255, broadcast
]

/** The 32-bit value of a dotted IPv4 address, or undefined when it is not one. */
function parseV4(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined
    value = value * 256 + Number(part)
  }
  return value
}

function classifyV4(value: number): AddressClass | undefined {
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits)
    if (value >= range.base && value < range.base + size) return range.kind
  }
  return undefined
}

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail included). */
function parseV6(text: string): number[] | undefined {
  let address = text.toLowerCase()
  const zone = address.indexOf('%')
  if (zone !== -1) address = address.slice(0, zone)
  const tail: number[] = []
  const lastColon = address.lastIndexOf(':')
  if (address.slice(lastColon + 1).includes('.')) {
    const value = parseV4(address.slice(lastColon + 1))
    if (value === undefined) return undefined
    tail.push(Math.floor(value / 65_536), value % 65_536)
    address = `${address.slice(0, lastColon + 1)}0`
  }
  const halves = address.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string) =>
    half === '' ? [] : half.split(':').map((group) => parseInt(group, 16))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  if (tail.length > 0) {
    // The placeholder group stands where the IPv4 tail goes.
    ;(halves.length === 2 ? rest : head).pop()
  }
  const fill = 8 - head.length - rest.length - tail.length
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined
  const all = [...head, ...Array<number>(fill).fill(0), ...rest, ...tail]
  return all.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? all
    : undefined
}

function classifyV6(groups: number[]): AddressClass | undefined {
  const g = (index: number): number => groups[index] ?? 0
  const g0 = g(0)
  const v4Tail = g(6) * 65_536 + g(7)
  const zeroUpTo = (count: number) => groups.slice(0, count).every((group) => group === 0)
  if (zeroUpTo(8)) return 'unspecified'
  if (zeroUpTo(7) && g(7) === 1) return 'loopback'
  // ::ffff:a.b.c.d (IPv4-mapped) reaches the IPv4 address itself; ::a.b.c.d (the deprecated
  // IPv4-compatible form) and the NAT64 prefix 64:ff9b::/96 may too: judge the IPv4 address.
  if (zeroUpTo(5) && g(5) === 0xffff) return classifyV4(v4Tail)
  if (zeroUpTo(6)) return classifyV4(v4Tail) ?? 'reserved'
  if (g0 === 0x64 && g(1) === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return classifyV4(v4Tail)
  }
  // 2002::/16 (6to4) carries an IPv4 address in its second and third groups.
  if (g0 === 0x2002) return classifyV4(g(1) * 65_536 + g(2))
  if ((g0 & 0xfe00) === 0xfc00) return 'private' // fc00::/7, unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local' // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private' // fec0::/10, the deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast'
  if (g0 === 0x2001 && g(1) === 0x0db8) return 'reserved' // documentation
  if (g0 === 0x0100 && g(1) === 0 && g(2) === 0 && g(3) === 0) {
    return 'reserved' // 100::/64, discard-only
  }
  return undefined
}

/**
 * The class of an IP address that is not public unicast (loopback, private, link-local, ...),
 * or undefined for one the issuer may connect to. IPv6 forms that carry an IPv4 address
 * (mapped `::ffff:127.0.0.1`, `::127.0.0.1`, NAT64, 6to4) are judged by that address. Anything
 * that is not an IP address at all is `reserved`: refused.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const family = isIP(text.split('%')[0]!)
  if (family === 4) return classifyV4(parseV4(text)!)
  if (family === 6) {
    const groups = parseV6(text)
    return groups === undefined ? 'reserved' : classifyV6(groups)
  }
  return 'reserved'
}

/** Whether an address is loopback, in IPv4, IPv6 or IPv4-mapped IPv6 form. */
export function isLoopbackAddress(address: string): boolean {
  return classifyAddress(address) === 'loopback'
}
