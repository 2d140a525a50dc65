/**
 * Parse results of tenant files kept in the database between starts, so that a restart with
 * thousands of tenant files parses only the files that changed. Parsing the YAML is most of the
 * time a load takes; everything after it (the schema, `{env: VAR}` secrets, provider scripts,
 * the rules across files) runs at every start as before.
 *
 * The results hold what the files hold, client secrets written in them included, so each entry
 * is sealed with KEY_ENCRYPTION_SECRET (AES-256-GCM, its key the additional data, so an entry
 * copied onto another key does not open); without that secret nothing is cached. An entry that
 * does not open or read back is a file parsed again, never a refused start.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import {
  decodeParsedDocuments,
  encodeParsedDocuments,
  parseCacheKey,
  parseYamlDocuments,
  type ParsedDocument,
  type YamlParseCache,
} from '@tessera/config-schema'
import type { ParsedConfigEntry, ParsedConfigStore } from '@tessera/store'

/** Entries that no start has used for this long are deleted (other replicas', rolled back). */
export const PRUNE_UNUSED_AFTER_MS = 7 * 86_400_000

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16
const HKDF_SALT = 'tessera parsed configuration'
const HKDF_INFO = 'aes-256-gcm v1'
// Entries sealed and written per transaction.
const ENTRIES_PER_WRITE = 1_000
// Files parsed between two turns of the event loop while saving: about 10 ms of work.
const FILES_PER_TURN = 50

/** What one load took from the cache and gave to it. */
export interface ParseCacheCounts {
  /** Files whose parse result came from the database. */
  hits: number
  /** Files parsed, for want of an entry. */
  misses: number
  /** Entries found that did not open or read back (another secret, damaged): parsed again. */
  unreadable: number
}

/** One load's use of the cache: hand `cache` to the load, then `save` what it missed. */
export interface ParseCacheSession {
  readonly cache: YamlParseCache
  readonly counts: ParseCacheCounts
  /**
   * Once the issuer listens: reads `files` again and parses, seals and stores those that
   * missed, a thousand entries per transaction and a turn of the event loop every few files,
   * then deletes the entries stored before {@link PRUNE_UNUSED_AFTER_MS} that this load did not
   * use. Resolves with how many of each. Parsing again here rather than keeping the results of
   * the load keeps the start as fast and as small as without a cache.
   */
  save(files: readonly string[]): Promise<{ added: number; pruned: number }>
  /** Makes a `save` under way stop after its current write (shutdown does not wait for it). */
  stop(): void
}

/**
 * Reads every entry of `store` and answers a session over them, sealed and opened with
 * `secret` (KEY_ENCRYPTION_SECRET). Rejects when the store cannot be read.
 */
export async function openParseCache(
  store: ParsedConfigStore,
  secret: string,
  now: number,
): Promise<ParseCacheSession> {
  const key = Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32))
  const stored = new Map<string, string>()
  for (const entry of await store.list()) stored.set(entry.key, entry.value)
  // The digests of the hits only: those of every file are made again when saving, so that a
  // cold start of ten thousand files does not hold ten thousand more strings.
  const hits = new Set<string>()
  const counts: ParseCacheCounts = { hits: 0, misses: 0, unreadable: 0 }
  let stopped = false

  const cache: YamlParseCache = {
    get(text) {
      const digest = parseCacheKey(text)
      const sealed = stored.get(digest)
      // Read once: the sealed text is not needed again, and ten thousand of them are megabytes.
      stored.delete(digest)
      const documents = sealed === undefined ? undefined : open(key, sealed, digest)
      if (documents !== undefined) {
        hits.add(digest)
        counts.hits++
      } else {
        if (sealed !== undefined) counts.unreadable++
        counts.misses++
      }
      return documents
    },
  }

  /** Seals `batch` (one call for its IVs: ten thousand small ones cost a tenth of a second). */
  const write = async (batch: readonly { digest: string; json: string }[]): Promise<number> => {
    if (batch.length === 0) return 0
    const ivs = randomBytes(IV_BYTES * batch.length)
    const entries: ParsedConfigEntry[] = batch.map(({ digest, json }, i) => ({
      key: digest,
      value: seal(key, json, digest, ivs.subarray(i * IV_BYTES, (i + 1) * IV_BYTES)),
    }))
    return store.add(entries, now)
  }

  return {
    cache,
    counts,
    async save(files) {
      stored.clear()
      const used = new Set<string>()
      let added = 0
      let batch: { digest: string; json: string }[] = []
      for (const [i, file] of files.entries()) {
        if (stopped) return { added, pruned: 0 }
        if (i % FILES_PER_TURN === 0) await yieldToRequests()
        let text: string
        try {
          text = readFileSync(file, 'utf8')
        } catch {
          continue
        }
        const digest = parseCacheKey(text)
        used.add(digest)
        if (hits.has(digest)) continue
        const json = encodeParsedDocuments(parseYamlDocuments(text))
        if (json !== undefined) batch.push({ digest, json })
        if (batch.length >= ENTRIES_PER_WRITE) {
          added += await write(batch)
          batch = []
        }
      }
      added += await write(batch)
      if (stopped) return { added, pruned: 0 }
      const pruned = await store.prune(used, now - PRUNE_UNUSED_AFTER_MS)
      return { added, pruned }
    },
    stop() {
      stopped = true
    },
  }
}

function seal(key: Buffer, json: string, digest: string, iv: Buffer): string {
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(digest, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()])
  return [VERSION, iv, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.')
}

/** The documents of a sealed entry; undefined when it does not open or read back. */
function open(key: Buffer, sealed: string, digest: string): ParsedDocument[] | undefined {
  const [version, iv, ciphertext, tag, ...rest] = sealed.split('.')
  if (version !== VERSION || rest.length > 0) return undefined
  if (iv === undefined || ciphertext === undefined || tag === undefined) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
      authTagLength: TAG_BYTES,
    })
    decipher.setAAD(Buffer.from(digest, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const json = Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
    return decodeParsedDocuments(json)
  } catch {
    return undefined
  }
}
