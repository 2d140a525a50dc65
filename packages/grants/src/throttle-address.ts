import { isIPv4, isIPv6 } from 'node:net'

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

/** The eight 16-bit groups of a valid IPv6 address (zone and embedded IPv4 handled). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail = ''] = address.split('::', 2)
  const groups = (part: string): number[] => {
    if (part === '') return []
    const out: number[] = []
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number)
        out.push((a << 8) | b, (c << 8) | d)
      } else {
        out.push(Number.parseInt(piece, 16))
      }
    }
    return out
  }
  const left = groups(head)
  const right = address.includes('::') ? groups(tail) : []
  const zeros = new Array<number>(8 - left.length - right.length).fill(0)
  return [...left, ...zeros, ...right]
}

/**
 * What one client address counts as for throttling: an IPv4 address itself, an IPv6 address its
 * /64 (one subscriber or host usually holds a whole /64, so counting single IPv6 addresses
 * would let one client rotate through billions of them), and an IPv4-mapped IPv6 address the
 * IPv4 address it maps. Anything else (no address known) counts as it is.
 */
export function addressBucket(address: string): string {
  const unzoned = address.split('%', 1)[0] ?? address
  if (isIPv4(unzoned)) return unzoned
  if (!isIPv6(unzoned)) return address
  const mapped = MAPPED_IPV4.exec(unzoned)?.[1]
  if (mapped !== undefined && isIPv4(mapped)) return mapped
  const prefix = ipv6Groups(unzoned.toLowerCase())
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')
  return `${prefix}::/64`
}
