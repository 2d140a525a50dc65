import { kidForDate } from '../kid.js'

/** `YYYY-MM-DD`, optionally `.N` with N ≥ 2 for a further key of the same date. */
export const KID_PATTERN = /^(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d*))?$/

interface ParsedKid {
  date: string
  sequence: number
}

function parseKid(kid: string): ParsedKid | undefined {
  const match = KID_PATTERN.exec(kid)
  if (match?.[1] === undefined) return undefined
  return { date: match[1], sequence: match[2] === undefined ? 1 : Number(match[2]) }
}

/** The UTC date a kid names, or undefined for a kid that is not of our format. */
export function kidDate(kid: string): string | undefined {
  return parseKid(kid)?.date
}

/**
 * Orders kids by date, then by sequence number: `.10` comes after `.9`, which plain string
 * comparison gets wrong.
 */
export function compareKids(a: string, b: string): number {
  const pa = parseKid(a)
  const pb = parseKid(b)
  if (pa === undefined || pb === undefined) return a < b ? -1 : a > b ? 1 : 0
  if (pa.date !== pb.date) return pa.date < pb.date ? -1 : 1
  return pa.sequence - pb.sequence
}

/**
 * The kid for a new key made at `now`: the bare date when no key of that date exists, else the
 * date with a sequence one past the highest stored for it. Going past the highest rather than
 * filling a gap keeps a pruned kid from naming a second, different key.
 */
export function nextKid(existingKids: Iterable<string>, now: number): string {
  const date = kidForDate(now)
  let highest = 0
  for (const kid of existingKids) {
    const parsed = parseKid(kid)
    if (parsed?.date === date) highest = Math.max(highest, parsed.sequence)
  }
  return highest === 0 ? date : `${date}.${highest + 1}`
}
