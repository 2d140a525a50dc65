/**
 * The parser thread of the parse cache (see `openParseCache`): @tessera/config-schema's own
 * parse, encoding and key, so its entries are the ones a load looks for, sealed as the cache
 * opens them (the e2e tests store with one and read with the other). A file that cannot be
 * read, or whose values JSON cannot carry, is left out. The cipher objects of ten thousand
 * entries, and the parse's garbage, stay on the thread: its memory goes when it ends.
 *
 * @module
 */
import { createCipheriv, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
// The writing half alone: the whole package would cost the thread 6 MB more.
import {
  encodeParsedDocuments,
  parseCacheKey,
  parseYamlDocuments,
} from '@tessera/config-schema/parse-cache-entries'
import type { ParsedConfigEntry } from '@tessera/store'

/** What the cache hands the thread. */
export interface ParserData {
  files: readonly string[]
  /** The digests of the files whose entries the load found: not parsed again. */
  hits: readonly string[]
  /** The AES-256 key the entries are sealed with. */
  key: Uint8Array
  /** Entries per message. */
  batchSize: number
}

/** What the parser thread posts: sealed entries to store, and after the last, every digest. */
export interface ParserMessage {
  batch: ParsedConfigEntry[]
  used?: string[]
}

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

const port = parentPort
if (port === null) throw new Error('the parse cache parser runs in a worker thread')
const data = workerData as ParserData
const key = Buffer.from(data.key)

function seal(json: string, digest: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(digest, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()])
  return [
    VERSION,
    ...[iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url')),
  ].join('.')
}

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
  if (json !== undefined) batch.push({ key: digest, value: seal(json, digest) })
  if (batch.length >= data.batchSize) {
    port.postMessage({ batch } satisfies ParserMessage)
    batch = []
  }
}
port.postMessage({ batch, used } satisfies ParserMessage)
