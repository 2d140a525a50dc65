import type { Client } from '@tessera/config-schema'
import { ClientKeysUnavailableError } from '@tessera/grants'
import type { ClientKeys } from '@tessera/grants'
import { createLocalJWKSet, errors } from 'jose'
import type { JSONWebKeySet, JWTHeaderParameters, KeyLike } from 'jose'
import type { Logger } from 'pino'
import * as z from 'zod'
import { guardedFetch, GuardedFetchError } from '../client-metadata/fetch-guard.js'
import { fetchJwksDocument, JWKS_ACCEPT } from './fetch-jwks.js'

/** How the keys behind a client's `jwks_uri` are fetched and kept. All durations in ms. */
export interface ClientJwksOptions {
  /** How long a fetched key set is used before it is fetched again (default 5 minutes). */
  cacheMaxAgeMs: number
  /**
   * The least time between two fetches of one URI, whatever asks for them: an unknown `kid`
   * or an expired set (default 30 s). Bounds what assertions with made-up kids can cost.
   */
  cooldownMs: number
  /** The whole fetch, body included (default 5 s). */
  timeoutMs: number
  /** The largest key set accepted (default 64 KiB). */
  maxBytes: number
  /** How long past `cacheMaxAgeMs` the last good set still serves while fetches fail (1 h). */
  maxStaleMs: number
  /**
   * FETCH_ALLOW_PRIVATE_ADDRESSES: the `jwks_uri` of a metadata-document client may lead to a
   * loopback, private or link-local address (default false). A configured client's `jwks_uri`
   * is the operator's choice and is not guarded.
   */
  allowPrivateAddresses: boolean
}

export const DEFAULT_CLIENT_JWKS_OPTIONS: ClientJwksOptions = {
  cacheMaxAgeMs: 5 * 60_000,
  cooldownMs: 30_000,
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  maxStaleMs: 60 * 60_000,
  allowPrivateAddresses: false,
}

type KeySet = (header: JWTHeaderParameters) => Promise<KeyLike>

// What a fetched document must look like before any key of it is looked at.
const JwksDocumentSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string() })).max(100),
})

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/**
 * The keys of a fetched set that may verify an assertion: RSA or EC P-256 public keys meant
 * for signatures. A private or symmetric key published by mistake is left out, never used.
 */
function usableKeys(document: z.infer<typeof JwksDocumentSchema>): JSONWebKeySet {
  const keys = document.keys.filter(
    (key) =>
      (key.kty === 'RSA' || (key.kty === 'EC' && key.crv === 'P-256')) &&
      (key.use === undefined || key.use === 'sig') &&
      PRIVATE_MEMBERS.every((member) => !(member in key)),
  )
  return { keys }
}

/**
 * The key set behind one `jwks_uri`: fetched when first needed, used for `cacheMaxAgeMs`,
 * fetched again on an unknown `kid`, at most once per `cooldownMs`, one fetch at a time shared
 * by every request waiting on it. When fetches fail the last good set keeps serving, up to
 * `maxStaleMs` past its age.
 */
class RemoteKeySet {
  #set: { keys: KeySet; fetchedAt: number } | undefined
  #attemptedAt: number | undefined
  #inflight: Promise<void> | undefined

  constructor(
    readonly uri: string,
    private readonly options: ClientJwksOptions,
    private readonly now: () => number,
    private readonly logger: Logger,
    /** Fetches the set: guarded for a client the tenant file does not list. */
    private readonly fetchDocument: (uri: string) => Promise<unknown>,
  ) {}

  async resolve(client: Client, header: JWTHeaderParameters): Promise<KeyLike> {
    const { cacheMaxAgeMs, maxStaleMs } = this.options
    const now = this.now()
    if (this.#set === undefined || now - this.#set.fetchedAt >= cacheMaxAgeMs) {
      await this.#refresh(now)
    }
    const set = this.#set
    if (set === undefined || this.now() - set.fetchedAt >= cacheMaxAgeMs + maxStaleMs) {
      throw new ClientKeysUnavailableError(client.clientId, this.#retryAfterSeconds())
    }
    try {
      return await set.keys(header)
    } catch (error) {
      // A kid the set does not hold may be a key the client has just added: look again, once
      // per cooldown, and answer from whatever set is current then.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
      await this.#refresh(this.now())
      if (this.#set === set) throw error
      return this.#set!.keys(header)
    }
  }

  #retryAfterSeconds(): number {
    const next = (this.#attemptedAt ?? this.now()) + this.options.cooldownMs
    return Math.max(1, Math.ceil((next - this.now()) / 1000))
  }

  /** Joins the fetch in flight, or starts one if the cooldown allows; never rejects. */
  #refresh(now: number): Promise<void> {
    if (this.#inflight !== undefined) return this.#inflight
    if (this.#attemptedAt !== undefined && now - this.#attemptedAt < this.options.cooldownMs) {
      return Promise.resolve()
    }
    this.#attemptedAt = now
    this.#inflight = this.#fetch().finally(() => {
      this.#inflight = undefined
    })
    return this.#inflight
  }

  async #fetch(): Promise<void> {
    try {
      const document = JwksDocumentSchema.safeParse(await this.fetchDocument(this.uri))
      if (!document.success) throw new Error('the body is not a JWK Set ({"keys": [...]})')
      const jwks = usableKeys(document.data)
      if (jwks.keys.length === 0) throw new Error('the JWK Set holds no usable public key')
      const local = createLocalJWKSet(jwks)
      this.#set = { keys: (header) => local(header), fetchedAt: this.now() }
      this.logger.info(
        {
          jwks_uri: this.uri,
          keys: jwks.keys.length,
          ignored: document.data.keys.length - jwks.keys.length,
        },
        'client keys fetched',
      )
    } catch (error) {
      // The reason names the URI's problem (a status, a size, a timeout), never an assertion.
      const reason = error instanceof Error ? error.message : 'failed'
      this.logger.warn(
        {
          jwks_uri: this.uri,
          reason,
          keeping: this.#set === undefined ? 'nothing' : 'last good keys',
        },
        'fetching client keys failed',
      )
    }
  }
}

/**
 * The issuer's {@link ClientKeys}: a client's inline `jwks`, or its `jwks_uri` through a cache
 * per URI shared by every tenant and kept across configuration reloads.
 */
export function createClientKeys(
  logger: Logger,
  now: () => number,
  options: Partial<ClientJwksOptions> = {},
): ClientKeys {
  const settings = { ...DEFAULT_CLIENT_JWKS_OPTIONS, ...options }
  const fetchConfigured = (uri: string) => fetchJwksDocument(uri, settings)
  const fetchGuarded = async (uri: string): Promise<unknown> => {
    const { body } = await guardedFetch(uri, {
      allowPrivateAddresses: settings.allowPrivateAddresses,
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
      accept: JWKS_ACCEPT,
    })
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown
    } catch {
      throw new GuardedFetchError('the body is not JSON')
    }
  }
  const inline = new WeakMap<Client, KeySet>()
  const remote = new Map<string, RemoteKeySet>()
  return {
    resolve(client, header) {
      if (client.jwks !== undefined) {
        let keys = inline.get(client)
        if (keys === undefined) {
          const local = createLocalJWKSet(client.jwks as JSONWebKeySet)
          keys = (h) => local(h)
          inline.set(client, keys)
        }
        return keys(header)
      }
      if (client.jwksUri !== undefined) {
        // The URI of a metadata-document client was chosen by whoever wrote the document: it is
        // fetched through the SSRF guard, and cached apart from the same URI of a listed client.
        const guarded = client.dynamic?.kind === 'metadata-document'
        const key = `${guarded ? 'guarded' : 'configured'} ${client.jwksUri}`
        let keys = remote.get(key)
        if (keys === undefined) {
          const fetchDocument = guarded ? fetchGuarded : fetchConfigured
          keys = new RemoteKeySet(client.jwksUri, settings, now, logger, fetchDocument)
          remote.set(key, keys)
        }
        return keys.resolve(client, header)
      }
      return Promise.reject(new errors.JWKSNoMatchingKey())
    },
  }
}
