import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OAuthError } from '../errors.js'
import { MAX_METADATA_JSON, parseClientMetadata } from './metadata.js'

// Whatever JSON a client sends, validation answers normalised metadata or a registration
// error, never another exception; and what it accepts is what a registered client may be.
const FIELDS = [
  'redirect_uris',
  'token_endpoint_auth_method',
  'grant_types',
  'response_types',
  'scope',
  'client_name',
  'client_uri',
  'software_id',
  'software_version',
  '__proto__',
  'constructor',
]
const value = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    'https://app.example.com/cb',
    'http://127.0.0.1/cb',
    'none',
    'client_secret_post',
    'authorization_code',
    'refresh_token',
    'code',
    'tools:read admin',
  ),
  fc.array(
    fc.oneof(
      fc.constantFrom('https://app.example.com/cb', 'authorization_code', 'code', 'refresh_token'),
      fc.string(),
    ),
    { maxLength: 4 },
  ),
)
/** Mostly a good value for `field`, sometimes anything. */
const field = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: value })
const nearlyValid = fc.record(
  {
    redirect_uris: field(
      fc.subarray(['https://app.example.com/cb', 'http://127.0.0.1/cb', 'com.example.app:/cb'], {
        minLength: 1,
      }),
    ),
    token_endpoint_auth_method: field(
      fc.constantFrom('none', 'client_secret_basic', 'client_secret_post'),
    ),
    grant_types: field(
      fc.constantFrom(['authorization_code'], ['authorization_code', 'refresh_token']),
    ),
    response_types: field(fc.constant(['code'])),
    scope: field(fc.constantFrom('tools:read', 'tools:call admin', '')),
    client_name: field(fc.string({ minLength: 1, maxLength: 100 })),
    client_uri: field(fc.webUrl()),
    software_id: field(fc.string({ minLength: 1, maxLength: 200 })),
    unknown: fc.jsonValue(),
  },
  { requiredKeys: [] },
)
const body = fc.oneof(
  { weight: 3, arbitrary: nearlyValid },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 9 }) },
  { weight: 1, arbitrary: fc.jsonValue() },
)

describe('parseClientMetadata (property)', () => {
  it('accepts some of the bodies generated, so both branches are checked', () => {
    const accepted = fc.sample(body, { numRuns: 5_000, seed: 42 }).filter((input) => {
      try {
        parseClientMetadata(input, ['tools:read', 'tools:call'])
        return true
      } catch {
        return false
      }
    })
    expect(accepted.length).toBeGreaterThan(50)
  })

  it('accepts only what registered clients may be, and refuses everything else as a registration error', () => {
    fc.assert(
      fc.property(body, (input) => {
        let metadata
        try {
          metadata = parseClientMetadata(input, ['tools:read', 'tools:call'])
        } catch (error) {
          expect(error).toBeInstanceOf(OAuthError)
          expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(
            (error as OAuthError).code,
          )
          return
        }
        expect(metadata.grant_types).toContain('authorization_code')
        expect(metadata.response_types).toEqual(['code'])
        expect(['none', 'client_secret_basic', 'client_secret_post']).toContain(
          metadata.token_endpoint_auth_method,
        )
        expect(metadata.redirect_uris.length).toBeGreaterThan(0)
        for (const scope of metadata.scope.split(' ')) {
          expect(['tools:read', 'tools:call']).toContain(scope)
        }
        expect(JSON.stringify(metadata).length).toBeLessThanOrEqual(MAX_METADATA_JSON)
      }),
      { numRuns: 5_000 },
    )
  })
})
