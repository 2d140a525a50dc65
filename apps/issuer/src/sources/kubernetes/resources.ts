/**
 * The Tenant resource as the API server sends it: names, and the zod schemas that every list
 * and watch answer passes before anything reads it.
 *
 * @module
 */
import * as z from 'zod'

/** The Tenant resource: `tenants.tessera.dev`, version v1, namespaced. */
export const TENANT_GROUP = 'tessera.dev'
export const TENANT_VERSION = 'v1'
export const TENANT_PLURAL = 'tenants'

/** The metadata every object from the API server has. */
const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
})
export const ResourceSchema = z.looseObject({ metadata: ObjectMetaSchema })
export type Resource = z.infer<typeof ResourceSchema>

export const TenantListSchema = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string().min(1) }),
  items: z.array(z.unknown()).nullish(),
})

/** `metav1.Status`, as sent in a watch ERROR event. */
export const StatusSchema = z.looseObject({
  code: z.number().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
})
export type Status = z.infer<typeof StatusSchema>
