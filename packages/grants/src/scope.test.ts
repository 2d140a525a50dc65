import { describe, expect, it } from 'vitest'
import { narrowScope } from './scope.js'

describe('narrowScope', () => {
  const allowed = ['orders:read', 'orders:write']

  it('grants every allowed scope when none is asked for', () => {
    expect(narrowScope(undefined, allowed)).toEqual(allowed)
    expect(narrowScope('   ', allowed)).toEqual(allowed)
  })

  it('narrows to the scopes asked for, without duplicates', () => {
    expect(narrowScope('orders:read orders:read', allowed)).toEqual(['orders:read'])
  })

  it('refuses a scope outside the client with invalid_scope', () => {
    expect(() => narrowScope('orders:read admin', allowed)).toThrow(
      expect.objectContaining({ code: 'invalid_scope' }),
    )
  })

  it('refuses characters RFC 6749 §3.3 does not allow', () => {
    expect(() => narrowScope('orders:read "x"', allowed)).toThrow(
      expect.objectContaining({ code: 'invalid_scope', description: 'malformed scope value' }),
    )
  })
})
