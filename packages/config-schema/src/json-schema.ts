/**
 * The schema of the `kind: Tenant` resource, for the Kubernetes CustomResourceDefinition.
 *
 * @module
 */
import * as z from 'zod'
import { TenantResourceSchema } from './schema.js'

/** A JSON value, as the schema is made of. */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

/**
 * The schema of the resource form of a tenant (`apiVersion: tessera.dev/v1`, `kind: Tenant`), as
 * a plain JSON-serialisable object ready to be the `openAPIV3Schema` of the Tenant CRD.
 *
 * It is generated from {@link TenantResourceSchema} (zod's `toJSONSchema`, input side, OpenAPI 3.0
 * dialect) and then made structural, as Kubernetes requires:
 * - `additionalProperties: false` is dropped (Kubernetes prunes or rejects unknown fields itself);
 * - `jwt_secret` and `client_secret`, a string or `{env: VAR}`, keep no type
 *   (`x-kubernetes-preserve-unknown-fields`), since a structural schema cannot say "string or
 *   object"; `parseConfig` checks them when the issuer reads the resource;
 * - `metadata` is restricted only in `name`, `apiVersion` and `kind` only in type (the API server
 *   owns them), and `status` is an object left as is.
 *
 * The cross-field rules (redirect URIs for authorization_code, openid for post-logout redirect
 * URIs, duplicates, unique hosts, provider scripts) are beyond a schema: the issuer applies them
 * with `parseConfig`.
 *
 * @example
 * const crd = { ..., versions: [{ name: 'v1', served: true, storage: true,
 *   schema: { openAPIV3Schema: tenantResourceJsonSchema() } }] }
 * @see docs/kubernetes-source.md (the resource form)
 * @see docs/deploy.md (regenerating the CRD in deploy/kubernetes)
 */
export function tenantResourceJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(TenantResourceSchema, { io: 'input', target: 'openapi-3.0' })
  const schema = structural(JSON.parse(JSON.stringify(generated)) as Json) as Record<string, Json>
  const properties = schema.properties as Record<string, Record<string, Json>>
  const metadata = properties.metadata as { properties: Json }
  return {
    ...schema,
    description: 'A tenant of the Tessera authorization server',
    properties: {
      ...properties,
      apiVersion: { type: 'string', description: 'tessera.dev/v1' },
      kind: { type: 'string', description: 'Tenant' },
      metadata: { type: 'object', properties: metadata.properties },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    required: ['spec'],
  }
}

/** Applies the structural-schema rewrites that hold anywhere in the tree. */
function structural(node: Json): Json {
  if (Array.isArray(node)) return node.map(structural)
  if (node === null || typeof node !== 'object') return node
  if (Array.isArray(node.anyOf)) {
    const { description } = node
    return {
      ...(description === undefined ? {} : { description }),
      'x-kubernetes-preserve-unknown-fields': true,
    }
  }
  const rewritten: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && 'properties' in node) continue
    rewritten[key] = key === 'default' || key === 'enum' ? value : structural(value)
  }
  return rewritten
}
