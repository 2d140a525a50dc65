import { describe, expect, it } from 'vitest'
import { normaliseHost } from './host.js'

describe('normaliseHost', () => {
  it.each([
    ['acme.localhost', 'acme.localhost'],
    ['Acme.LOCALHOST', 'acme.localhost'],
    ['acme.localhost:3000', 'acme.localhost'],
    ['ACME.example.com.:443', 'acme.example.com'],
    ['localhost:8080', 'localhost'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['[::1]:3000', '[::1]'],
    ['[::1]', '[::1]'],
    ['[2001:DB8::1]:8443', '[2001:db8::1]'],
    ['::1', '[::1]'],
    [' acme.localhost ', 'acme.localhost'],
  ])('%j becomes %j', (host, expected) => {
    expect(normaliseHost(host)).toBe(expected)
  })
})
