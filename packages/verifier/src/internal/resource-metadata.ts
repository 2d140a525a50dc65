import * as z from 'zod'
import type { ProtectedResourceMetadata, ResourceMetadataOptions } from '../options.js'
import { isQuotable } from '../render.js'
import { DPOP_ALGORITHMS } from './dpop-options.js'
import type { ResolvedDpop } from './dpop-options.js'

/** The well-known path of RFC 9728 §3. */
export const WELL_KNOWN = '/.well-known/oauth-protected-resource'

/** The metadata of a verifier as the adapters serve it. */
export interface ResolvedResourceMetadata {
  /** The document, snake_case. */
  document: ProtectedResourceMetadata
  /** Where the document is published: the path form when the resource has a path. */
  url: string
  /** The request paths that answer with the document. */
  paths: readonly string[]
}

const url = (protocols: readonly string[], message: string) =>
  z.string().refine((value) => {
    try {
      const parsed = new URL(value)
      return protocols.includes(parsed.protocol) && parsed.search === '' && parsed.hash === ''
    } catch {
      return false
    }
  }, message)
const httpUrl = url(
  ['https:', 'http:'],
  'must be an absolute http(s) URL without query or fragment',
)
const strings = z.array(z.string().min(1))

/** The `resourceMetadata` option: the RFC 9728 §2 fields in camelCase, nothing else. */
export const ResourceMetadataSchema: z.ZodType<ResourceMetadataOptions> = z.strictObject({
  resource: httpUrl.optional(),
  authorizationServers: z.array(httpUrl).min(1, 'must name at least one server').optional(),
  scopesSupported: strings.optional(),
  resourceName: z.string().min(1).optional(),
  resourceDocumentation: httpUrl.optional(),
  resourcePolicyUri: httpUrl.optional(),
  resourceTosUri: httpUrl.optional(),
  jwksUri: httpUrl.optional(),
  resourceSigningAlgValuesSupported: strings.optional(),
  tlsClientCertificateBoundAccessTokens: z.boolean().optional(),
  authorizationDetailsTypesSupported: strings.optional(),
  dpopSigningAlgValuesSupported: strings.optional(),
  dpopBoundAccessTokensRequired: z.boolean().optional(),
})

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
}

/**
 * Completes the checked option: `resource` defaults to the one audience, `authorizationServers`
 * to the issuers, and with `dpop` the document says what the verifier accepts (RFC 9728 §2:
 * `dpop_signing_alg_values_supported`, and `dpop_bound_access_tokens_required` when required).
 * Throws a `TypeError` when no resource can be named, or for DPoP fields that `dpop` sets.
 */
export function resolveResourceMetadata(
  options: ResourceMetadataOptions,
  audience: readonly string[] | undefined,
  issuers: readonly string[],
  dpop: ResolvedDpop | undefined,
): ResolvedResourceMetadata {
  if (dpop !== undefined) {
    for (const field of ['dpopSigningAlgValuesSupported', 'dpopBoundAccessTokensRequired']) {
      if (
        Object.hasOwn(options, field) &&
        options[field as keyof ResourceMetadataOptions] !== undefined
      ) {
        throw new TypeError(
          `createVerifier: options.resourceMetadata.${field}: set from the dpop option; leave it out`,
        )
      }
    }
  }
  const resource = options.resource ?? (audience?.length === 1 ? audience[0] : undefined)
  if (resource === undefined) {
    throw new TypeError(
      'createVerifier: options.resourceMetadata.resource: required unless audience is one string',
    )
  }
  if (!httpUrl.safeParse(resource).success) {
    throw new TypeError(
      `createVerifier: options.resourceMetadata.resource: the audience ${JSON.stringify(resource)} is not an http(s) URL without query or fragment; name the resource`,
    )
  }
  const document: ProtectedResourceMetadata = {
    resource,
    authorization_servers: [...(options.authorizationServers ?? issuers)],
    bearer_methods_supported: ['header'],
  }
  for (const [name, value] of Object.entries(options)) {
    if (name === 'resource' || name === 'authorizationServers' || value === undefined) continue
    document[snakeCase(name)] = Array.isArray(value) ? [...(value as unknown[])] : value
  }
  if (dpop !== undefined) {
    document.dpop_signing_alg_values_supported = [...DPOP_ALGORITHMS]
    if (dpop.required) document.dpop_bound_access_tokens_required = true
  }
  // RFC 9728 §3.1: the well-known segment goes between the host and the resource's path.
  const { origin, pathname } = new URL(resource)
  const path = pathname === '/' ? '' : pathname
  const metadataUrl = `${origin}${WELL_KNOWN}${path}`
  // A URL's serialisation percent-encodes `"` and has no `\`; checked all the same, since it
  // goes into a quoted challenge parameter.
  if (!isQuotable(metadataUrl)) {
    throw new TypeError(
      'createVerifier: options.resourceMetadata.resource: not usable in a WWW-Authenticate header',
    )
  }
  return {
    document,
    url: metadataUrl,
    paths: path === '' ? [WELL_KNOWN] : [WELL_KNOWN, `${WELL_KNOWN}${path}`],
  }
}

/** An answer of the metadata endpoint. */
export interface MetadataResponse {
  status: 200
  headers: Record<string, string>
  /** The JSON document, for HEAD as well: the server leaves it out and keeps its length. */
  body: string
}

/**
 * The answer to a request for the metadata, or `undefined` when the request is not one: another
 * path, or a method other than GET and HEAD (passed on, so the application decides).
 */
export function answerMetadata(
  metadata: ResolvedResourceMetadata,
  method: string,
  pathname: string,
): MetadataResponse | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !metadata.paths.includes(pathname)) {
    return undefined
  }
  const json = JSON.stringify(metadata.document)
  return {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'content-length': String(new TextEncoder().encode(json).length),
      // Public and shared by every client; an hour keeps changes of the servers timely.
      'cache-control': 'public, max-age=3600',
      // Browser-based clients discover the resource's authorization servers from other origins.
      'access-control-allow-origin': '*',
    },
    body: json,
  }
}

const METADATA: unique symbol = Symbol('@tessera/verifier resource metadata')

type WithMetadata = object & { [METADATA]?: ResolvedResourceMetadata }

/** Attaches the resolved metadata to a verifier, under a key of this module. */
export function attachMetadata<T extends object>(
  verifier: T,
  metadata: ResolvedResourceMetadata | undefined,
): T {
  if (metadata !== undefined) (verifier as WithMetadata)[METADATA] = metadata
  return verifier
}

/** The metadata of a verifier made with `resourceMetadata`; `undefined` otherwise. */
export function metadataOf(verifier: object): ResolvedResourceMetadata | undefined {
  return (verifier as WithMetadata)[METADATA]
}
