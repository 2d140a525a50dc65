/**
 * Clients named by an https `client_id` URL: the document behind it is fetched through the
 * guarded fetcher, checked, cached per process, and made a client of each tenant that accepts
 * such clients.
 *
 * @module
 */
import type { Client } from '@tessera/config-schema'
import { OAuthError } from '@tessera/grants'
import type { Logger } from 'pino'
import {
  documentClient,
  isClientIdUrl,
  parseClientDocument,
  UnusableDocumentError,
} from './client-document.js'
import type { ClientDocument } from './client-document.js'
import { ExpiringCache, freshnessMs } from './expiring-cache.js'
import type { FreshnessBounds } from './expiring-cache.js'
import { DOCUMENT_FETCH_LIMITS, guardedFetch, GuardedFetchError } from './fetch-guard.js'
import type { GuardedFetchOptions, GuardedResponse } from './fetch-guard.js'

export interface ClientDocumentOptions {
  /** FETCH_ALLOW_PRIVATE_ADDRESSES. */
  allowPrivateAddresses: boolean
  now: () => number
  logger: Logger
  /** Documents (and failures) kept per process (default 1000). */
  maxEntries?: number
  /** How long a fetched document is used, whatever its headers say (5 minutes to 24 hours). */
  freshness?: FreshnessBounds
  /** How long a failure is remembered before the URL is fetched again (default 30 s). */
  failureTtlMs?: number
  /** Tests: how a URL is fetched (default: {@link guardedFetch} within 5 s and 5 KiB). */
  fetch?: (url: string) => Promise<GuardedResponse>
}

export const DEFAULT_FRESHNESS: FreshnessBounds = { minMs: 5 * 60_000, maxMs: 24 * 3_600_000 }
const DEFAULT_FAILURE_TTL_MS = 30_000
const DEFAULT_MAX_ENTRIES = 1000

type Outcome = { ok: true; document: ClientDocument } | { ok: false; reason: string }

/** The documents behind `client_id` URLs, shared by every tenant of the process. */
export interface ClientDocuments {
  /** FETCH_ALLOW_PRIVATE_ADDRESSES, which also widens the URLs that name a document. */
  readonly allowPrivateAddresses: boolean
  /**
   * The checked document behind `url`.
   *
   * @throws OAuthError `invalid_client` naming why it cannot be used
   */
  resolve(url: string): Promise<ClientDocument>
}

/**
 * Fetches and checks the documents behind `client_id` URLs: one fetch at a time per URL, shared
 * by every request that needs it; a document is kept as long as its cache headers say (within
 * the bounds), a failure for `failureTtlMs`, so a bad URL cannot be used to make the issuer
 * hammer a host; at most `maxEntries` URLs are kept, the least recently used go first.
 */
export function createClientDocuments(options: ClientDocumentOptions): ClientDocuments {
  const { allowPrivateAddresses, now, logger } = options
  const bounds = options.freshness ?? DEFAULT_FRESHNESS
  const failureTtlMs = options.failureTtlMs ?? DEFAULT_FAILURE_TTL_MS
  const fetchOptions: GuardedFetchOptions = {
    allowPrivateAddresses,
    ...DOCUMENT_FETCH_LIMITS,
    accept: 'application/json',
  }
  const fetch = options.fetch ?? ((url: string) => guardedFetch(url, fetchOptions))
  const cache = new ExpiringCache<Outcome>(options.maxEntries ?? DEFAULT_MAX_ENTRIES, now)

  const load = async (url: string) => {
    try {
      const response = await fetch(url)
      const document = parseClientDocument(url, response.body)
      logger.info({ client_id: url }, 'client metadata document fetched')
      return {
        value: { ok: true, document } as const,
        ttlMs: freshnessMs(response.headers, now(), bounds),
      }
    } catch (error) {
      if (!(error instanceof GuardedFetchError || error instanceof UnusableDocumentError)) {
        throw error
      }
      logger.warn({ client_id: url, reason: error.message }, 'client metadata document refused')
      return { value: { ok: false, reason: error.message } as const, ttlMs: failureTtlMs }
    }
  }

  return {
    allowPrivateAddresses,
    async resolve(url) {
      const outcome = await cache.get(url, () => load(url))
      if (outcome.ok) return outcome.document
      throw new OAuthError(
        'invalid_client',
        `The client's metadata document cannot be used: ${outcome.reason}.`,
      )
    },
  }
}

/** What a tenant's dynamic clients look up a `client_id` URL in. */
export interface MetadataDocumentClients {
  /**
   * The client `url` names, undefined when it is no metadata document URL.
   *
   * @throws OAuthError `invalid_client` when its document cannot be used
   */
  find(url: string): Promise<Client | undefined>
}

/** The metadata-document clients of one tenant, which may get `scopes` at most. */
export function metadataDocumentClients(
  documents: ClientDocuments,
  scopes: readonly string[],
): MetadataDocumentClients {
  return {
    async find(url) {
      if (!isClientIdUrl(url, documents.allowPrivateAddresses)) return undefined
      return documentClient(await documents.resolve(url), scopes)
    },
  }
}
