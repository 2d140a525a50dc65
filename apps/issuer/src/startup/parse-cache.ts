/**
 * Parse results of tenant files kept in the database between starts, so that a restart with
 * thousands of tenant files parses only the files that changed. Parsing the YAML is most of the
 * time a load takes; everything after it (the schema, `{env: VAR}` secrets, provider scripts,
 * the rules across files) runs at every start.
 *
 * The results hold what the files hold, client secrets written in them included, so each entry
 * is sealed with KEY_ENCRYPTION_SECRET (@tessera/keys/envelope's `parsed-configuration`
 * envelopes, bound to the entry's key, so an entry copied onto another key does not open);
 * without that secret nothing is cached. An entry that
 * does not open or read back is a file parsed again, never a refused start.
 *
 * @module
 */
import { Worker } from 'node:worker_threads'
import {
  decodeParsedDocuments,
  parseCacheKey,
  type ParsedDocument,
  type YamlParseCache,
} from '@tessera/config-schema'
import { createSealer } from '@tessera/keys/envelope'
import type { Sealer } from '@tessera/keys/envelope'
import type { ParsedConfigStore } from '@tessera/store'
import type { ParserData, ParserMessage } from './parse-cache-worker.js'
import { workerUrl } from './worker-url.js'

/**
 * A start deletes the entries stored longer ago than this that it did not use: old versions of
 * files, or another replica's files (which that replica stores again at its next start).
 */
export const PRUNE_UNUSED_AFTER_MS = 7 * 86_400_000

// Entries per message of the parser thread, and per transaction.
const ENTRIES_PER_WRITE = 1_000

/** The module the parser thread runs. */
const PARSER = workerUrl('./parse-cache-worker.js', import.meta.url)

/** The parser thread's heap: its garbage dies young; bounded, so a huge file cannot grow it. */
const PARSER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 }

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
   * Once the issuer listens: a worker thread reads `files` again, and parses and seals those
   * that missed; this thread stores them, a thousand per transaction, then deletes the
   * entries stored before {@link PRUNE_UNUSED_AFTER_MS} that this load did not use. Resolves with
   * how many of each. Parsing again, on a thread whose heap goes when it ends, keeps the start
   * as fast and the process as small as without a cache: keeping the load's results cost memory
   * when listening, and parsing them again on this thread left 45 MB more resident at 10,000
   * files. When every file hit, no thread is started: the hits are the entries in use.
   */
  save(files: readonly string[]): Promise<{ added: number; pruned: number }>
  /** Stops a `save` under way after its current write (shutdown does not wait for it). */
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
  const sealer = createSealer(secret, 'parsed-configuration')
  const stored = new Map<string, string>()
  for (const entry of await store.list()) stored.set(entry.key, entry.value)
  // The digests of the hits only: those of every file are made again when saving, so that a
  // cold start of ten thousand files does not hold ten thousand more strings.
  const hits = new Set<string>()
  const counts: ParseCacheCounts = { hits: 0, misses: 0, unreadable: 0 }
  let stopped = false
  let stopWorker: (() => void) | undefined

  const cache: YamlParseCache = {
    get(text) {
      const digest = parseCacheKey(text)
      const sealed = stored.get(digest)
      // Read once: the sealed text is not needed again, and ten thousand of them are megabytes.
      stored.delete(digest)
      const documents = sealed === undefined ? undefined : open(sealer, sealed, digest)
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

  return {
    cache,
    counts,
    async save(files) {
      stored.clear()
      if (counts.misses === 0) {
        // Every file hit: nothing to parse, and the hits are the entries in use.
        const used = new Set(hits)
        hits.clear()
        if (stopped) return { added: 0, pruned: 0 }
        return { added: 0, pruned: await store.prune(used, now - PRUNE_UNUSED_AFTER_MS) }
      }
      const workerData: ParserData = {
        files,
        hits: [...hits],
        secret,
        batchSize: ENTRIES_PER_WRITE,
      }
      const worker = new Worker(PARSER, {
        workerData,
        resourceLimits: PARSER_LIMITS,
        stdout: true,
        stderr: true,
      })
      hits.clear()
      stopWorker = () => void worker.terminate()
      if (stopped) stopWorker()
      let added = 0
      let failure: unknown
      let writing = Promise.resolve()
      const used = await new Promise<string[] | undefined>((resolve) => {
        worker.on('message', (message: ParserMessage) => {
          // One write at a time, in the order the thread sent them; the first failure stops it.
          writing = writing.then(async () => {
            if (failure === undefined && message.batch.length > 0) {
              added += await store.add(message.batch, now)
            }
          })
          writing = writing.catch((error: unknown) => {
            failure ??= error
            void worker.terminate()
          })
          if (message.used !== undefined) resolve(message.used)
        })
        worker.once('error', (error) => {
          failure ??= error
          resolve(undefined)
        })
        // Terminated by stop, or done after its last message.
        worker.once('exit', () => resolve(undefined))
      })
      // Every write has ended before the store may close.
      await writing
      if (failure !== undefined) {
        throw failure instanceof Error ? failure : new Error('storing parse results failed')
      }
      if (used === undefined || stopped) return { added, pruned: 0 }
      const pruned = await store.prune(new Set(used), now - PRUNE_UNUSED_AFTER_MS)
      return { added, pruned }
    },
    stop() {
      stopped = true
      stopWorker?.()
    },
  }
}

/** The documents of a sealed entry; undefined when it does not open or read back. */
function open(sealer: Sealer, sealed: string, digest: string): ParsedDocument[] | undefined {
  try {
    return decodeParsedDocuments(sealer.open(sealed, [digest]))
  } catch {
    return undefined
  }
}
