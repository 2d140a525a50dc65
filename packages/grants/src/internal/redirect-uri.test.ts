import { describe, expect, it } from 'vitest'
import { isRegisteredRedirectUri } from './redirect-uri.js'

describe('isRegisteredRedirectUri', () => {
  const registered = [
    'https://app.example.com/cb',
    'http://127.0.0.1/callback',
    'http://[::1]:8400/callback?x=1',
    'http://localhost:9000/cb',
    'com.example.app:/oauth2redirect',
  ]

  it.each([
    'https://app.example.com/cb',
    'http://127.0.0.1/callback',
    'http://127.0.0.1:1/callback',
    'http://127.0.0.1:51234/callback',
    'http://127.0.0.1:65535/callback',
    'http://[::1]:8400/callback?x=1',
    'http://[::1]:9/callback?x=1',
    'http://[::1]/callback?x=1',
    'http://localhost:9000/cb',
    'com.example.app:/oauth2redirect',
  ])('accepts %s', (uri) => {
    expect(isRegisteredRedirectUri(registered, uri)).toBe(true)
  })

  it.each([
    ['another port of a non-loopback host', 'https://app.example.com:8443/cb'],
    ['localhost at another port (RFC 8252 §8.3)', 'http://localhost:9001/cb'],
    ['a loopback URI with another path', 'http://127.0.0.1:5000/callback/x'],
    ['a loopback URI with a query added', 'http://127.0.0.1:5000/callback?x=1'],
    ['a loopback URI with its query dropped', 'http://[::1]:8400/callback'],
    ['the other loopback address', 'http://[::1]:5000/callback'],
    ['https on a loopback registration', 'https://127.0.0.1:5000/callback'],
    ['port 0', 'http://127.0.0.1:0/callback'],
    ['a port with a leading zero', 'http://127.0.0.1:08080/callback'],
    ['a port past 65535', 'http://127.0.0.1:65536/callback'],
    ['an empty port', 'http://127.0.0.1:/callback'],
    ['user information that hides another host', 'http://127.0.0.1:80@evil.example/callback'],
    ['a longer host', 'http://127.0.0.1.evil.example/callback'],
    ['another private-use path', 'com.example.app:/other'],
    ['a fragment', 'http://127.0.0.1:5000/callback#x'],
  ])('refuses %s', (_name, uri) => {
    expect(isRegisteredRedirectUri(registered, uri)).toBe(false)
  })

  it('lets any port through for a registration that names one', () => {
    expect(isRegisteredRedirectUri(['http://127.0.0.1:8400/cb'], 'http://127.0.0.1:50000/cb')).toBe(
      true,
    )
    expect(isRegisteredRedirectUri(['http://127.0.0.1:8400/cb'], 'http://127.0.0.1/cb')).toBe(true)
  })
})
