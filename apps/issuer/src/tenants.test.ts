import type { Tenant } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { issuerUrl } from './tenants.js'

const tenant = (host: string): Tenant => ({ hosts: [host, 'other.test'] }) as unknown as Tenant

describe('issuerUrl', () => {
  it('start: the scheme and the first host exactly as written', () => {
    expect(issuerUrl(tenant('auth.acme.example'), 'https')).toBe('https://auth.acme.example')
    expect(issuerUrl(tenant('acme.localhost:3000'), 'https')).toBe('https://acme.localhost:3000')
  })

  it('dev: a first host without a port takes the listening port', () => {
    expect(issuerUrl(tenant('acme.localhost'), 'http', 3100)).toBe('http://acme.localhost:3100')
    expect(issuerUrl(tenant('127.0.0.1'), 'http', 3100)).toBe('http://127.0.0.1:3100')
    expect(issuerUrl(tenant('[::1]'), 'http', 3100)).toBe('http://[::1]:3100')
    expect(issuerUrl(tenant('::1'), 'http', 3100)).toBe('http://[::1]:3100')
  })

  it('dev: a first host that names its port keeps it', () => {
    expect(issuerUrl(tenant('acme.localhost:3000'), 'http', 3100)).toBe(
      'http://acme.localhost:3000',
    )
    expect(issuerUrl(tenant('[::1]:8443'), 'http', 3100)).toBe('http://[::1]:8443')
  })
})
