/**
 * Schema building blocks shared by the tenant schema and its sections.
 *
 * @module
 */
import * as z from 'zod'
import { ENV_NAME, SCOPE_TOKEN } from './fields.js'

/** A strict object whose unknown-key issue names the keys that are allowed. */
export function strictObject<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  const known = Object.keys(shape).join(', ')
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown field; expected one of ${known}` : undefined,
  })
}

/** A list whose string items must be unique; a duplicate is reported at its own index. */
export function uniqueList<Item extends z.ZodType<string>>(item: Item, noun: string) {
  return z.array(item).superRefine(
    (values, ctx) => {
      // Items that failed their own schema are reported already; compare only the valid ones.
      const failed = new Set(ctx.issues.map((issue) => issue.path?.[0]))
      const seen = new Set<string>()
      values.forEach((value, index) => {
        if (failed.has(index) || typeof value !== 'string') return
        if (seen.has(value)) {
          ctx.addIssue({ code: 'custom', message: `duplicate ${noun} "${value}"`, path: [index] })
        }
        seen.add(value)
      })
    },
    // Run even when some items failed, so that every problem is reported in one go.
    { when: (payload) => Array.isArray(payload.value) },
  )
}

/** `{env: VAR_NAME}`: the value is read from that environment variable when the config loads. */
export const EnvReferenceSchema = strictObject({
  env: z.string().regex(ENV_NAME, 'must be an environment variable name'),
}).describe('Read the value from this environment variable')

export function secretSchema(literal: z.ZodString) {
  return z.union([literal, EnvReferenceSchema], {
    error: 'must be a string or {env: VARIABLE_NAME}',
  })
}

/** A list of distinct scope tokens (RFC 6749 §3.3). */
export const ScopeListSchema = uniqueList(
  z.string().regex(SCOPE_TOKEN, 'must be a scope token: printable ASCII without spaces, " or \\'),
  'scope',
)
