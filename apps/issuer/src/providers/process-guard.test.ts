import { describe, expect, it } from 'vitest'
import { describeStray } from './process-guard.js'

const PASSWORD = 'Pw-5e0b2a'

describe('describeStray', () => {
  it('keeps the class name and the frames, never the message', () => {
    const described = describeStray(new TypeError(`bad ${PASSWORD}`))
    expect(described.kind).toBe('TypeError')
    expect(described.at?.[0]).toMatch(/^at .*process-guard\.test\.ts:\d+:\d+/)
    expect(JSON.stringify(described)).not.toContain(PASSWORD)
  })

  it('drops message lines dressed as stack frames', () => {
    const error = new Error(`first line\n    at leak (${PASSWORD}:1:1)\nlast`)
    const described = describeStray(error)
    expect(JSON.stringify(described)).not.toContain(PASSWORD)
    expect(described.at?.length).toBeGreaterThan(0)
  })

  it('names the type of a thrown value that is not an Error', () => {
    expect(describeStray(PASSWORD)).toEqual({ kind: 'string' })
    expect(describeStray(null)).toEqual({ kind: 'null' })
    expect(describeStray({ password: PASSWORD })).toEqual({ kind: 'object' })
  })

  it('survives an error whose properties throw when read', () => {
    const error = new Error('x')
    Object.defineProperty(error, 'stack', {
      get() {
        throw new Error(PASSWORD)
      },
    })
    expect(describeStray(error)).toEqual({ kind: 'a value that could not be read' })
  })

  it('cuts a class name of any length to 100 characters', () => {
    const error = new Error('x')
    error.name = 'N'.repeat(500)
    expect(describeStray(error).kind).toHaveLength(100)
  })
})
