const OPEN_OBJECT = 0x7b // {
const OPEN_ARRAY = 0x5b // [
const CLOSE_OBJECT = 0x7d // }
const CLOSE_ARRAY = 0x5d // ]
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \
const COLON = 0x3a // :

/** A name that one JSON object holds twice, and how deep that object is (0: the top level). */
export interface RepeatedKey {
  key: string
  depth: number
}

/**
 * The first name repeated within one object of `json`, compared after unescaping (`"a"` and
 * `"\u0061"` are the same name), or undefined. JSON.parse keeps the last value of a repeated
 * name without a word (RFC 8259 §4 leaves it to the parser), so the text is read again here.
 *
 * `json` must be text that JSON.parse accepted: the scan then only has to tell keys from string
 * values (a key is the string followed by a colon) and track which object it is in.
 */
export function findRepeatedKey(json: string): RepeatedKey | undefined {
  // One set of names per open object; null for an open array.
  const open: (Set<string> | null)[] = []
  const length = json.length
  let at = 0
  while (at < length) {
    const char = json.charCodeAt(at)
    if (char === OPEN_OBJECT) open.push(new Set())
    else if (char === OPEN_ARRAY) open.push(null)
    else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) open.pop()
    else if (char === QUOTE) {
      const start = at
      let escaped = false
      at++
      while (at < length) {
        const inner = json.charCodeAt(at)
        if (inner === QUOTE) break
        if (inner === BACKSLASH) {
          escaped = true
          at++
        }
        at++
      }
      const end = at + 1
      const names = open.at(-1)
      if (names) {
        let next = end
        while (next < length && isJsonSpace(json.charCodeAt(next))) next++
        if (json.charCodeAt(next) === COLON) {
          const key = escaped
            ? (JSON.parse(json.slice(start, end)) as string)
            : json.slice(start + 1, at)
          if (names.has(key)) return { key, depth: open.length - 1 }
          names.add(key)
        }
      }
      at = end
      continue
    }
    at++
  }
  return undefined
}

/** Insignificant whitespace (RFC 8259 §2): space, tab, line feed, carriage return. */
function isJsonSpace(char: number): boolean {
  return char === 0x20 || char === 0x09 || char === 0x0a || char === 0x0d
}
