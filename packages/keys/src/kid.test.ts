import { describe, expect, it } from 'vitest'
import { kidForDate } from './kid.js'

describe('kidForDate', () => {
  it('names the UTC date of the instant', () => {
    expect(kidForDate(Date.UTC(2025, 0, 31, 23, 59, 59, 999))).toBe('2025-01-31')
    expect(kidForDate(Date.UTC(2025, 1, 1, 0, 0, 0, 0))).toBe('2025-02-01')
  })

  it('refuses a time that is not a finite number', () => {
    expect(() => kidForDate(Number.NaN)).toThrow(TypeError)
  })
})
