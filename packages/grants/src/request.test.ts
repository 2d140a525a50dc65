import { describe, expect, it } from 'vitest'
import { OAuthError } from './errors.js'
import { parseTokenRequestBody } from './request.js'

const FORM = 'application/x-www-form-urlencoded'
const JSON_TYPE = 'application/json; charset=utf-8'

function errorOf(fn: () => unknown): OAuthError {
  try {
    fn()
  } catch (error) {
    if (error instanceof OAuthError) return error
    throw error
  }
  throw new Error('expected an OAuthError')
}

describe('parseTokenRequestBody', () => {
  it('reads form and JSON bodies into the same parameters', () => {
    const form = parseTokenRequestBody('grant_type=password&username=a%20b&password=x', FORM)
    const json = parseTokenRequestBody(
      JSON.stringify({ grant_type: 'password', username: 'a b', password: 'x' }),
      JSON_TYPE,
    )
    expect({ ...form }).toEqual({ grant_type: 'password', username: 'a b', password: 'x' })
    expect({ ...json }).toEqual({ ...form })
  })

  it('treats empty values as absent', () => {
    expect({ ...parseTokenRequestBody('scope=&grant_type=password', FORM) }).toEqual({
      grant_type: 'password',
    })
    expect({ ...parseTokenRequestBody('{"scope":""}', 'application/json') }).toEqual({})
  })

  it.each([
    ['a repeated form parameter', 'grant_type=password&grant_type=password', FORM, 'repeated'],
    ['malformed JSON', '{"grant_type":', JSON_TYPE, 'not valid JSON'],
    ['a JSON array', '["grant_type"]', JSON_TYPE, 'JSON object'],
    ['a JSON number value', '{"grant_type":1}', JSON_TYPE, 'must be a string'],
    ['a JSON array value', '{"username":["a","b"]}', JSON_TYPE, 'must be a string'],
    ['a JSON null value', '{"username":null}', JSON_TYPE, 'must be a string'],
    ['a nested JSON object', '{"username":{"a":1}}', JSON_TYPE, 'must be a string'],
    ['__proto__ in JSON', '{"__proto__":"x"}', JSON_TYPE, 'not allowed'],
    ['constructor in a form', 'constructor=x', FORM, 'not allowed'],
    ['__proto__ in a form', '__proto__=x', FORM, 'not allowed'],
    ['text/plain', 'grant_type=password', 'text/plain', 'unsupported content type'],
    ['no content type', 'grant_type=password', undefined, 'unsupported content type'],
  ])('refuses %s with invalid_request', (_name, body, type, message) => {
    const error = errorOf(() => parseTokenRequestBody(body, type))
    expect(error.code).toBe('invalid_request')
    expect(error.description).toContain(message)
  })

  it('returns an object without a prototype', () => {
    const params = parseTokenRequestBody('grant_type=password', FORM)
    expect(Object.getPrototypeOf(params)).toBeNull()
  })

  it.each([
    ['a repeated name', '{"grant_type":"password","grant_type":"password"}', 'grant_type'],
    ['a repeated name with other values', '{"scope":"a","username":"u","scope":"b"}', 'scope'],
    ['an escaped spelling of the same name', '{"a":"1","\\u0061":"2"}', 'a'],
    ['a name with escapes, repeated', '{"a\\"b":"1", "a\\u0022b" :"2"}', 'a?b'],
    ['a repeated name across whitespace', '{ "x" : "1" ,\n\t"x"\r\n: "2" }', 'x'],
    ['a repeated empty name', '{"":"1","":"2"}', ''],
  ])('refuses %s in a JSON body with invalid_request', (_name, body, key) => {
    const error = errorOf(() => parseTokenRequestBody(body, JSON_TYPE))
    expect(error.code).toBe('invalid_request')
    expect(error.description).toBe(`parameter "${key}" is repeated`)
  })

  it('refuses a name repeated in a nested object', () => {
    const error = errorOf(() =>
      parseTokenRequestBody('{"grant_type":"password","x":[{"b":1,"\\u0062":2}]}', JSON_TYPE),
    )
    expect(error.description).toBe('name "b" is repeated in a nested object')
  })

  it('accepts the same name in different objects, and names that only look alike', () => {
    // Nested objects are refused for not being strings, not for their names.
    expect(
      errorOf(() => parseTokenRequestBody('{"a":{"a":"x","b":{"a":"y"}},"b":"z"}', JSON_TYPE))
        .description,
    ).toBe('parameter "a" must be a string')
    expect({
      ...parseTokenRequestBody(
        '{"a":"a","A":"\\"a\\":","a ":":","\\\\":"\\u0061","b":"{\\"b\\":1}"}',
        JSON_TYPE,
      ),
    }).toEqual({ a: 'a', A: '"a":', 'a ': ':', '\\': 'a', b: '{"b":1}' })
  })
})
