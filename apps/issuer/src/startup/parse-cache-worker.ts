/**
 * The parser thread of the parse cache (see `openParseCache`): @tessera/config-schema's own
 * parse, encoding and key, so its entries are the ones a load looks for, sealed as the cache
 * opens them (the e2e tests store with one and read with the other). A file that cannot be
 * read, or whose values JSON cannot carry, is left out. The cipher objects of ten thousand
 * entries, and the parse's garbage, stay on the thread: its memory goes when it ends.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
// The writing half alone: the whole package would cost the thread 6 MB more.
import {
  encodeParsedDocuments,
  parseCacheKey,
  parseYamlDocuments,
} from '@tessera/config-schema/parse-cache-entries'
import { createSealer } from '@tessera/keys/envelope'
import type { ParsedConfigEntry } from '@tessera/store'

/** What the cache hands the thread. */
export interface ParserData {
  files: readonly string[]
  /** The digests of the files whose entries the load found: not parsed again. */
  hits: readonly string[]
  /** KEY_ENCRYPTION_SECRET, which the entries are sealed with. */
  secret: string
  /** Entries per message. */
  batchSize: number
}

/** What the parser thread posts: sealed entries to store, and after the last, every digest. */
export interface ParserMessage {
  batch: ParsedConfigEntry[]
  used?: string[]
}

const port = parentPort
if (port === null) throw new Error('the parse cache parser runs in a worker thread')
const data = workerData as ParserData
const sealer = createSealer(data.secret, 'parsed-configuration')

const hits = new Set(data.hits)
const used: string[] = []
let batch: ParsedConfigEntry[] = []
for (const file of data.files) {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    continue
  }
  const digest = parseCacheKey(text)
  used.push(digest)
  if (hits.has(digest)) continue
  const json = encodeParsedDocuments(parseYamlDocuments(text))
  if (json !== undefined) batch.push({ key: digest, value: sealer.seal(json, [digest]) })
  if (batch.length >= data.batchSize) {
    port.postMessage({ batch } satisfies ParserMessage)
    batch = []
  }
}
port.postMessage({ batch, used } satisfies ParserMessage)
