import { describe, expect, it } from 'vitest'
import { isLocalhostName, loopbackLookup } from './default-fetch.js'
import { describeFailure } from './fetch-jwks.js'

describe('isLocalhostName', () => {
  it('is true for localhost and names under .localhost only (RFC 6761 §6.3)', () => {
    for (const name of ['localhost', 'acme.localhost', 'a.b.localhost', 'acme.localhost.']) {
      expect(isLocalhostName(name)).toBe(true)
    }
    for (const name of [
      'localhost.example.test',
      'notlocalhost',
      'acmelocalhost',
      'localhost.evil',
      '127.0.0.1',
      '[::1]',
      'example.test',
    ]) {
      expect(isLocalhostName(name)).toBe(false)
    }
  })
})

describe('loopbackLookup', () => {
  function lookup(name: string, options: object): Promise<unknown[]> {
    return new Promise((resolve, reject) =>
      loopbackLookup(name, options, (error, address, family) =>
        error ? reject(error) : resolve([address, family]),
      ),
    )
  }

  it('answers loopback for localhost names, in the family asked for', async () => {
    expect(await lookup('globex.localhost', {})).toEqual(['127.0.0.1', 4])
    expect(await lookup('GLOBEX.LOCALHOST', { family: 6 })).toEqual(['::1', 6])
    expect(await lookup('acme.localhost', { all: true })).toEqual([
      [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
      undefined,
    ])
    expect(await lookup('acme.localhost', { all: true, family: 4 })).toEqual([
      [{ address: '127.0.0.1', family: 4 }],
      undefined,
    ])
  })

  it('asks the system resolver for any other name', async () => {
    await expect(lookup('nowhere.invalid', {})).rejects.toMatchObject({ code: 'ENOTFOUND' })
  })
})

describe('describeFailure', () => {
  it('finds the system error along the cause chain', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), {
      code: 'ECONNREFUSED',
      address: '127.0.0.1',
      port: 3000,
    })
    expect(describeFailure(new TypeError('fetch failed', { cause: refused }))).toBe(
      'ECONNREFUSED 127.0.0.1:3000',
    )
    const both = Object.assign(new AggregateError([refused, new Error('::1')]), {
      code: 'ECONNREFUSED',
    })
    expect(describeFailure(new TypeError('fetch failed', { cause: both }))).toBe(
      'ECONNREFUSED 127.0.0.1:3000',
    )
    const missing = Object.assign(new Error('getaddrinfo ENOTFOUND x.test'), {
      code: 'ENOTFOUND',
      hostname: 'x.test',
    })
    expect(describeFailure(new TypeError('fetch failed', { cause: missing }))).toBe(
      'ENOTFOUND x.test',
    )
  })

  it('keeps a message short and on one line, and copes with anything thrown', () => {
    expect(describeFailure(new Error(`bad\n${'x'.repeat(500)}`))).toHaveLength(201)
    expect(
      describeFailure(new Error('proxy http://user:hunter2@proxy.test:8080/ refused', {})),
    ).toBe('proxy http://proxy.test:8080/ refused')
    expect(describeFailure('a string')).toBe('unknown error')
    expect(describeFailure(new TypeError('fetch failed'))).toBe('unknown error')
    const loop: Error & { cause?: unknown } = new Error('')
    loop.cause = loop
    expect(describeFailure(loop)).toBe('unknown error')
  })
})
