import { describe, expect, it } from 'vitest'
import { isCodeVerifier, isS256Challenge, verifyS256 } from './pkce.js'

// RFC 7636 Appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

describe('PKCE (RFC 7636)', () => {
  it('verifies the example of Appendix B and refuses any other verifier', () => {
    expect(verifyS256(VERIFIER, CHALLENGE)).toBe(true)
    expect(verifyS256(`${VERIFIER.slice(0, -1)}l`, CHALLENGE)).toBe(false)
    expect(verifyS256(VERIFIER, CHALLENGE.slice(0, -1))).toBe(false)
  })

  it('accepts verifiers of 43 to 128 unreserved characters only', () => {
    expect(isCodeVerifier(VERIFIER)).toBe(true)
    expect(isCodeVerifier('a'.repeat(128))).toBe(true)
    expect(isCodeVerifier('a'.repeat(42))).toBe(false)
    expect(isCodeVerifier('a'.repeat(129))).toBe(false)
    expect(isCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false)
    expect(isCodeVerifier(`${'a'.repeat(42)}~._-`)).toBe(true)
  })

  it('accepts only 43-character base64url challenges', () => {
    expect(isS256Challenge(CHALLENGE)).toBe(true)
    expect(isS256Challenge(`${CHALLENGE}=`)).toBe(false)
    expect(isS256Challenge(CHALLENGE.slice(1))).toBe(false)
  })
})
