import { describe, expect, it } from 'vitest'
import { normaliseResourceUri } from './resource-uri.js'

describe('normaliseResourceUri', () => {
  it('lower-cases scheme and host and drops a default port, keeping the rest as written', () => {
    expect(normaliseResourceUri('HTTPS://MCP.Acme.test:443/MCP?x=Y')).toBe(
      'https://mcp.acme.test/MCP?x=Y',
    )
    expect(normaliseResourceUri('http://api.test:80/')).toBe('http://api.test/')
    expect(normaliseResourceUri('http://api.test:443/')).toBe('http://api.test:443/')
    expect(normaliseResourceUri('https://[::1]:8443/a')).toBe('https://[::1]:8443/a')
    expect(normaliseResourceUri('urn:Example:API')).toBe('urn:Example:API')
  })

  it('refuses what is not an absolute URI without a fragment', () => {
    for (const uri of ['/relative', 'https://api.test/#frag', 'no scheme', '', 'https://a b/']) {
      expect(normaliseResourceUri(uri)).toBeUndefined()
    }
  })
})
