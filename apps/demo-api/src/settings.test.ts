import { describe, expect, it } from 'vitest'
import { parseSettings } from './settings.js'

describe('parseSettings', () => {
  it('reads a comma-separated issuer list and applies defaults', () => {
    expect(parseSettings({ ISSUERS: 'http://a.test, https://b.test,', JWT_SECRET: '' })).toEqual({
      issuers: ['http://a.test', 'https://b.test'],
      audience: undefined,
      secret: undefined,
      algorithms: undefined,
      port: 4000,
      host: '127.0.0.1',
    })
  })

  it('reads every variable', () => {
    const settings = parseSettings({
      ISSUERS: 'https://a.test',
      AUDIENCE: 'https://api.test',
      JWT_SECRET: 's'.repeat(32),
      ALGORITHMS: 'RS256',
      PORT: '8080',
      HOST: '0.0.0.0',
    })
    expect(settings).toMatchObject({ algorithms: ['RS256'], port: 8080, host: '0.0.0.0' })
  })

  it('lists every problem, one per line', () => {
    expect(() => parseSettings({ ISSUERS: 'ftp://x', ALGORITHMS: 'none', PORT: '99999' })).toThrow(
      /^ISSUERS: .*\nALGORITHMS: .*\nPORT: .*$/,
    )
  })
})
