import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OAuthError } from './errors.js'
import { parseTokenRequestBody } from './request.js'
import type { TokenParams } from './request.js'

// Whatever the body and its Content-Type, the parser answers parameters or an
// OAuthError (invalid_request), never another exception.
const RUNS = 10_000

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  // Lone surrogates and other UTF-16 oddities.
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
)
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('grant_type', 'code', 'scope', 'a', '') },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString') },
  { weight: 4, arbitrary: text },
)
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'APPLICATION/JSON; charset=utf-8',
    'application/x-www-form-urlencoded;charset=UTF-8',
    'text/plain',
    'multipart/form-data; boundary=x',
  ),
  text,
  fc.constant(undefined),
)

/** A JSON string literal for `value`, sometimes with every character escaped as \uXXXX. */
const literal = (value: string, escapeAll: boolean): string =>
  escapeAll
    ? `"${Array.from({ length: value.length }, (_, i) => `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`
    : JSON.stringify(value)

/** Object members written by hand, so that names may repeat (JSON.stringify never repeats). */
const members = fc.array(
  fc.tuple(
    name,
    fc.oneof({ weight: 5, arbitrary: text }, { weight: 1, arbitrary: fc.jsonValue() }),
    fc.boolean(),
  ),
  { maxLength: 8 },
)

function expectParams(params: TokenParams): void {
  expect(Object.getPrototypeOf(params)).toBeNull()
  for (const value of Object.values(params)) {
    expect(typeof value).toBe('string')
    expect(value).not.toBe('')
  }
}

/** Runs the parser; returns its parameters, or undefined when it refused with an OAuthError. */
function parse(raw: string, type: string | undefined): TokenParams | undefined {
  try {
    const params = parseTokenRequestBody(raw, type)
    expectParams(params)
    return params
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error
    expect(error.code).toBe('invalid_request')
    return undefined
  }
}

describe('parseTokenRequestBody (property)', () => {
  it(`answers ${RUNS} arbitrary bodies and content types with parameters or an OAuthError`, () => {
    const body = fc.oneof(
      text,
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc
        .array(fc.tuple(text, text), { maxLength: 6 })
        .map((pairs) => new URLSearchParams(pairs).toString()),
    )
    fc.assert(
      fc.property(body, contentType, (raw, type) => {
        parse(raw, type)
      }),
      { numRuns: RUNS },
    )
  })

  it(`reads ${RUNS} JSON objects exactly: a repeated name (after unescaping) is refused`, () => {
    fc.assert(
      fc.property(members, fc.constantFrom(' ', '', '\n\t'), (entries, space) => {
        const raw = `{${space}${entries
          .map(
            ([key, value, escape]) =>
              `${literal(key, escape)}${space}:${space}${JSON.stringify(value)}`,
          )
          .join(`,${space}`)}${space}}`
        const params = parse(raw, 'application/json')
        const names = entries.map(([key]) => key)
        const repeated = new Set(names).size !== names.length
        const forbidden = names.some((key) =>
          ['__proto__', 'constructor', 'prototype'].includes(key),
        )
        const nonString = entries.some(([, value]) => typeof value !== 'string')
        if (repeated || forbidden || nonString) {
          expect(params).toBeUndefined()
        } else {
          expect({ ...params }).toEqual(
            Object.fromEntries(entries.filter(([, value]) => value !== '').map(([k, v]) => [k, v])),
          )
        }
      }),
      { numRuns: RUNS },
    )
  })

  it(`reads ${RUNS} forms exactly: a repeated field is refused`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(name, text), { maxLength: 8 }), (pairs) => {
        const raw = new URLSearchParams(pairs).toString()
        const params = parse(raw, 'application/x-www-form-urlencoded')
        // What a form can carry: URLSearchParams turns lone surrogates into U+FFFD.
        const decoded = [...new URLSearchParams(raw)]
        const names = decoded.map(([key]) => key)
        const repeated = new Set(names).size !== names.length
        const forbidden = names.some((key) =>
          ['__proto__', 'constructor', 'prototype'].includes(key),
        )
        if (repeated || forbidden) {
          expect(params).toBeUndefined()
        } else {
          expect({ ...params }).toEqual(Object.fromEntries(decoded.filter(([, v]) => v !== '')))
        }
      }),
      { numRuns: RUNS },
    )
  })
})
