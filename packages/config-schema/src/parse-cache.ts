/**
 * Parse results of tenant files kept between starts. Parsing the YAML is most of the time a load
 * of thousands of files takes (1.5 of 2.5 s for ten thousand files of 500 bytes), and the result
 * depends only on the text and the parser, so a caller can keep it (the issuer keeps it sealed
 * in its database) and hand it back through {@link YamlParseCache}. Everything after parsing
 * (the schema, `{env: VAR}` secrets, provider scripts, the rules across files) runs every time.
 *
 * @module
 */
import * as z from 'zod'
import type { ParsedDocument } from './internal/read-yaml.js'

export type { ParsedDocument } from './internal/read-yaml.js'
export { encodeParsedDocuments, parseCacheKey, parseYamlDocuments } from './parse-cache-entries.js'

/**
 * Where `readConfigFile`, `parseConfigFile` and `loadConfigFiles` look for a file's parse result
 * before parsing it. They store nothing: the cache's owner fills it later, from
 * {@link parseYamlDocuments} (the issuer does, on a worker thread, once it listens).
 */
export interface YamlParseCache {
  /** The documents of `text`, if known. */
  get(text: string): readonly ParsedDocument[] | undefined
}

const OFFSET = z.number().int().min(-1)
const DOCUMENTS = z.array(
  z.union([
    z.strictObject({ value: z.unknown(), offset: OFFSET }),
    z.strictObject({
      errors: z.array(z.strictObject({ offset: OFFSET, message: z.string() })),
    }),
    z.strictObject({ failed: z.string(), offset: OFFSET }),
  ]),
)

/** The documents of a text {@link encodeParsedDocuments} made; undefined for any other text. */
export function decodeParsedDocuments(json: string): ParsedDocument[] | undefined {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  const checked = DOCUMENTS.safeParse(value)
  return checked.success ? checked.data : undefined
}
