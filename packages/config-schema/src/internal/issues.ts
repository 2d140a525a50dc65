/**
 * Turns zod issues into one short message per field, worded for someone editing YAML.
 *
 * @module
 */
import type * as z from 'zod'

/** A field path as the YAML locator and the dotted issue path both use it. */
export type FieldPath = (string | number)[]

/** A problem at a path, before it gets a file and a line. */
export interface PathIssue {
  path: FieldPath
  message: string
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'a list',
  object: 'a mapping',
}

/**
 * Default wording for issues whose schema did not name its own message. Passed per parse, so
 * zod's global configuration is left alone. No message repeats the input: it may be a secret.
 */
export const errorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required'
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array'
        ? Number(issue.minimum) <= 1
          ? 'must not be empty'
          : `must have at least ${issue.minimum} ${issue.origin === 'string' ? 'characters' : 'items'}`
        : `must be at least ${issue.minimum}`
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array'
        ? `must have at most ${issue.maximum} ${issue.origin === 'string' ? 'characters' : 'items'}`
        : `must be at most ${issue.maximum}`
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(', ')}`
    case 'unrecognized_keys':
      return 'unknown field'
    case 'invalid_format':
      return 'has an invalid format'
    default:
      return undefined
  }
}

/**
 * Flattens zod issues into path/message pairs: one issue per unknown key (at the key itself, so
 * it gets the key's line), and for a union that failed, the issues of the one branch whose type
 * matched the input (a string secret that is too short, an `{env}` object with a bad name).
 */
export function flattenIssues(
  issues: readonly z.core.$ZodIssue[],
  base: FieldPath = [],
): PathIssue[] {
  const flat: PathIssue[] = []
  for (const issue of issues) {
    const path = [...base, ...issue.path.map(toSegment)]
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) flat.push({ path: [...path, key], message: issue.message })
    } else if (issue.code === 'invalid_union') {
      const matching = issue.errors.filter(
        (branch) =>
          !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
      )
      const [only] = matching
      if (only && matching.length === 1) flat.push(...flattenIssues(only, path))
      else flat.push({ path, message: issue.message })
    } else {
      flat.push({ path, message: issue.message })
    }
  }
  return flat
}

function toSegment(key: PropertyKey): string | number {
  return typeof key === 'symbol' ? String(key) : key
}
