import { describe, expect, it } from 'vitest'
import { VerifierError } from './errors.js'
import { renderError } from './render.js'

describe('renderError', () => {
  it('renders a missing token as a bare 401 challenge', () => {
    const response = renderError(
      new VerifierError('ERR_TOKEN_MISSING', 'A bearer token is required'),
    )
    expect(response).toEqual({
      status: 401,
      headers: {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        'www-authenticate': 'Bearer realm="api"',
      },
      body: '{"error_description":"A bearer token is required"}',
    })
  })

  it('renders token errors as 401 invalid_token', () => {
    for (const code of ['ERR_TOKEN_EXPIRED', 'ERR_KID_UNKNOWN', 'ERR_TOKEN_TOO_LONG'] as const) {
      const response = renderError(new VerifierError(code, 'The token has expired'), {
        realm: 'orders',
      })
      expect(response.status).toBe(401)
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="orders", error="invalid_token", error_description="The token has expired"',
      )
      expect(JSON.parse(response.body)).toEqual({
        error: 'invalid_token',
        error_description: 'The token has expired',
      })
    }
  })

  it('renders a malformed header as 400 invalid_request', () => {
    const response = renderError(
      new VerifierError('ERR_AUTHORIZATION_INVALID', 'The bearer token is empty'),
    )
    expect(response.status).toBe(400)
    expect(response.headers['www-authenticate']).toContain('error="invalid_request"')
  })

  it('renders a missing scope as 403 with the scope attribute', () => {
    const response = renderError(
      new VerifierError('ERR_INSUFFICIENT_SCOPE', 'The token lacks a required scope', {
        scope: 'orders:read orders:write',
      }),
    )
    expect(response.status).toBe(403)
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="The token lacks a required scope", scope="orders:read orders:write"',
    )
  })

  it('renders unavailable keys as 503 with Retry-After and no challenge', () => {
    const response = renderError(
      new VerifierError('ERR_JWKS_UNAVAILABLE', 'The signing keys are unavailable', {
        retryAfter: 12.2,
      }),
    )
    expect(response.status).toBe(503)
    expect(response.headers['retry-after']).toBe('13')
    expect(response.headers['www-authenticate']).toBeUndefined()
  })

  it('fails closed on an unexpected error, revealing nothing of it', () => {
    const response = renderError(new Error('database password is hunter2\n    at secret.ts:1:1'))
    expect(response.status).toBe(401)
    expect(response.body).toBe(
      '{"error":"invalid_token","error_description":"The access token is invalid"}',
    )
    expect(renderError('a string').status).toBe(401)
    expect(renderError(undefined).status).toBe(401)
  })

  it('keeps quoted values within RFC 6750 characters', () => {
    const response = renderError(
      new VerifierError('ERR_TOKEN_INVALID', 'bad "quote" \\ back\nline\u00e9'),
      { realm: 'a"b' },
    )
    const header = response.headers['www-authenticate']!
    expect(header).toBe(
      'Bearer realm="a?b", error="invalid_token", error_description="bad ?quote? ? back?line?"',
    )
    for (const char of header) {
      const code = char.charCodeAt(0)
      expect(code >= 0x20 && code <= 0x7e).toBe(true)
    }
  })

  it('answers in the DPoP scheme when the error names it, with the accepted algs', () => {
    const algs = 'algs="ES256 RS256 PS256 EdDSA"'
    const proof = renderError(
      new VerifierError('ERR_DPOP_PROOF_INVALID', 'The DPoP proof htu does not match', {
        scheme: 'DPoP',
        claim: 'htu',
      }),
      { resourceMetadata: 'https://api.test/.well-known/oauth-protected-resource' },
    )
    expect(proof.status).toBe(401)
    expect(proof.headers['www-authenticate']).toBe(
      `DPoP realm="api", error="invalid_dpop_proof", error_description="The DPoP proof htu does not match", ${algs}, resource_metadata="https://api.test/.well-known/oauth-protected-resource"`,
    )
    expect(JSON.parse(proof.body)).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'The DPoP proof htu does not match',
    })
    for (const code of ['ERR_DPOP_REQUIRED', 'ERR_DPOP_NOT_BOUND', 'ERR_TOKEN_EXPIRED'] as const) {
      const response = renderError(new VerifierError(code, 'No', { scheme: 'DPoP' }))
      expect(response.headers['www-authenticate']).toBe(
        `DPoP realm="api", error="invalid_token", error_description="No", ${algs}`,
      )
    }
  })

  it('offers both challenges to a request without a token when DPoP is on, DPoP alone when required', () => {
    const missing = new VerifierError('ERR_TOKEN_MISSING', 'An access token is required')
    const algs = 'algs="ES256 RS256 PS256 EdDSA"'
    expect(renderError(missing, { dpop: {} }).headers['www-authenticate']).toBe(
      `Bearer realm="api", DPoP realm="api", ${algs}`,
    )
    expect(renderError(missing, { dpop: { required: true } }).headers['www-authenticate']).toBe(
      `DPoP realm="api", ${algs}`,
    )
  })

  it('renders a failing replay cache as 503 with Retry-After', () => {
    const response = renderError(
      new VerifierError('ERR_REPLAY_CACHE_UNAVAILABLE', 'Try again', {
        retryAfter: 1,
        scheme: 'DPoP',
      }),
    )
    expect(response.status).toBe(503)
    expect(response.headers['retry-after']).toBe('1')
    expect(JSON.parse(response.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'Try again',
    })
  })
})
