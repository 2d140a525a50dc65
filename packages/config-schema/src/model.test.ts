import { describe, expect, it } from 'vitest'
import { ConfigError, formatConfigIssue } from './model.js'

describe('formatConfigIssue', () => {
  it('prints file:line: path: message', () => {
    const issue = { file: 'a.yaml', line: 7, path: 'config.clients.0.client_id', message: 'bad' }
    expect(formatConfigIssue(issue)).toBe('a.yaml:7: config.clients.0.client_id: bad')
  })

  it('leaves out an empty path', () => {
    expect(formatConfigIssue({ file: 'a.yaml', line: 3, path: '', message: 'bad' })).toBe(
      'a.yaml:3: bad',
    )
  })

  it('leaves out the line when it is 0 (environment settings)', () => {
    const issue = { file: 'environment', line: 0, path: 'JWT_SECRET', message: 'too short' }
    expect(formatConfigIssue(issue)).toBe('environment: JWT_SECRET: too short')
  })
})

describe('ConfigError', () => {
  it('carries every issue and prints one line per issue', () => {
    const issues = [
      { file: 'a.yaml', line: 1, path: 'name', message: 'one' },
      { file: 'b.yaml', line: 2, path: '', message: 'two' },
    ]
    const error = new ConfigError(issues)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('ConfigError')
    expect(error.issues).toEqual(issues)
    expect(error.message).toBe('a.yaml:1: name: one\nb.yaml:2: two')
  })
})
