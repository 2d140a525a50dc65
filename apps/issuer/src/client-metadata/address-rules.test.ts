import { describe, expect, it } from 'vitest'
import { classifyAddress, isLoopbackAddress } from './address-rules.js'

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:100.64.0.1', 'shared (CGNAT)'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::127.0.0.1', 'loopback'],
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2001:db8::1', 'reserved'],
    ['not-an-address', 'reserved'],
    ['', 'reserved'],
    ['1.2.3', 'reserved'],
  ])('refuses %s as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind)
  })

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '169.253.255.255',
    '223.255.255.255',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    'fbff::1',
    'fe00::1',
  ])('allows the public address %s', (address) => {
    expect(classifyAddress(address)).toBeUndefined()
  })

  it('tells loopback addresses in every form', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.2', '[::1]'].map(isLoopbackAddress)).toEqual([
      true,
      true,
      true,
      true,
    ])
    expect(['10.0.0.1', '8.8.8.8', 'fe80::1', 'localhost'].map(isLoopbackAddress)).toEqual([
      false,
      false,
      false,
      false,
    ])
  })
})
