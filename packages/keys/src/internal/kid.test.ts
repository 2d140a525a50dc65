import { describe, expect, it } from 'vitest'
import { compareKids, kidDate, nextKid } from './kid.js'

const now = Date.UTC(2025, 2, 10, 12)

describe('nextKid', () => {
  it('uses the bare date when no key of that date exists', () => {
    expect(nextKid(['2025-03-09', '2025-03-09.2'], now)).toBe('2025-03-10')
  })

  it('numbers a further key of the same date from .2', () => {
    expect(nextKid(['2025-03-10'], now)).toBe('2025-03-10.2')
    expect(nextKid(['2025-03-10', '2025-03-10.2'], now)).toBe('2025-03-10.3')
  })

  it('goes past the highest sequence instead of reusing a pruned kid', () => {
    expect(nextKid(['2025-03-10.3'], now)).toBe('2025-03-10.4')
  })
})

describe('compareKids', () => {
  it('orders by date, then by sequence number', () => {
    const kids = ['2025-03-10.10', '2025-03-10', '2025-03-09.2', '2025-03-10.9', '2025-03-10.2']
    expect(kids.sort(compareKids)).toEqual([
      '2025-03-09.2',
      '2025-03-10',
      '2025-03-10.2',
      '2025-03-10.9',
      '2025-03-10.10',
    ])
  })
})

describe('kidDate', () => {
  it('reads the date of a kid and nothing else', () => {
    expect(kidDate('2025-03-10.2')).toBe('2025-03-10')
    expect(kidDate('other')).toBeUndefined()
  })
})
