/**
 * The writing half of the parse cache (see parse-cache.ts): what a cache's owner needs to fill it.
 * Kept apart, without zod, for the issuer's thread that fills the cache after a start: it loads
 * this module and `yaml` alone (a thread that loaded the whole package held 6 MB more).
 *
 * @module
 */
import { hash } from 'node:crypto'
import { createRequire } from 'node:module'
import { parseYaml, type ParsedDocument } from './internal/read-yaml.js'

export type { ParsedDocument } from './internal/read-yaml.js'

/**
 * The documents of a YAML text, as `readConfigFile` parses them and a `YamlParseCache`
 * keeps them, for a cache that fills itself from the files later (the issuer, after it listens).
 */
export function parseYamlDocuments(text: string): ParsedDocument[] {
  return parseYaml(text)
}

const { version: YAML_VERSION } = createRequire(import.meta.url)('yaml/package.json') as {
  version: string
}

/** Another parser version or another form of the documents makes other keys. */
const FORMAT = `yaml ${YAML_VERSION}; tessera parsed documents 1`

/** The key of `text`'s parse result: SHA-256 hex of the parser version and the text. */
export function parseCacheKey(text: string): string {
  // One-shot: ten thousand Hash objects would each hold native memory until collected.
  return hash('sha256', `${FORMAT}\0${text}`, 'hex')
}

/**
 * The documents as JSON text, or undefined when JSON would not give them back exactly: numbers
 * JSON has no form for (`.inf`, `.nan`, -0), values other than plain objects, arrays, strings,
 * numbers, booleans and null (YAML 1.1 dates, binaries, sets), a key `__proto__`, or one value
 * reached twice (an alias). Such a file is parsed at every start.
 */
export function encodeParsedDocuments(documents: readonly ParsedDocument[]): string | undefined {
  const seen = new Set<object>()
  // An empty document's value (undefined) leaves no key in JSON, which reads back the same.
  const pending: unknown[] = documents.map((document) =>
    'value' in document ? (document.value ?? null) : null,
  )
  while (pending.length > 0) {
    const value = pending.pop()
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || Object.is(value, -0)) return undefined
      continue
    }
    if (typeof value !== 'object' || seen.has(value)) return undefined
    seen.add(value)
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype) return undefined
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) return undefined
        pending.push(value[i])
      }
      continue
    }
    if (Object.getPrototypeOf(value) !== Object.prototype) return undefined
    if (Object.getOwnPropertySymbols(value).length > 0) return undefined
    for (const key of Object.getOwnPropertyNames(value)) {
      if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(value, key)) {
        return undefined
      }
      pending.push((value as Record<string, unknown>)[key])
    }
  }
  return JSON.stringify(documents)
}
