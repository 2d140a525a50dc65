import { authenticateClient } from './client-auth.js'
import type { AuthenticatedClient } from './client-auth.js'
import type { GrantDeps, TenantContext, TokenResponse } from './context.js'
import { OAuthError } from './errors.js'
import { authorizationCodeGrant } from './authorization-code.js'
import { clientCredentialsGrant } from './client-credentials.js'
import { passwordGrant } from './password.js'
import { refreshTokenGrant } from './refresh-token.js'
import type { TokenParams } from './request.js'
import type { DpopBinding } from './dpop/binding.js'
import { verifyDpopProof } from './dpop/proof.js'

/** One token request as the HTTP edge hands it over. */
export interface TokenRequestInput {
  params: TokenParams
  /** The raw `Authorization` header, if any. */
  authorization: string | undefined
  /** The client's network address, for throttling. */
  address: string
  /** The request's DPoP headers; absent: as a request without one. */
  dpop?: TokenDpopInput
}

/** The DPoP side of a token request (RFC 9449). */
export interface TokenDpopInput {
  /** Every `DPoP` header of the request, as received. */
  proofs: readonly string[]
  /** The issuer's scheme with the Host the request was sent to: `htu` may name it. */
  requestOrigin?: string
}

const KNOWN_GRANTS = new Set([
  'authorization_code',
  'refresh_token',
  'password',
  'client_credentials',
])

/**
 * The token endpoint: checks `grant_type`, authenticates the client, then runs the grant.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.2
 */
export async function handleTokenRequest(
  input: TokenRequestInput,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<TokenResponse> {
  const grantType = input.params.grant_type
  if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required')
  if (!KNOWN_GRANTS.has(grantType)) {
    throw new OAuthError('unsupported_grant_type', 'unsupported grant_type')
  }
  const authenticated = await authenticateClient(
    {
      params: input.params,
      authorization: input.authorization,
      endpoint: 'token',
      address: input.address,
    },
    tenant,
    deps,
  )
  const { client } = authenticated
  const dpop = await checkDpop(input.dpop, authenticated, tenant, deps)
  switch (grantType) {
    case 'authorization_code':
      return authorizationCodeGrant(input.params, client, tenant, deps, dpop)
    case 'refresh_token':
      return refreshTokenGrant(input.params, client, tenant, deps, dpop)
    case 'client_credentials':
      return clientCredentialsGrant(input.params, authenticated, tenant, deps, dpop.jkt)
    default:
      return passwordGrant(input.params, client, input.address, tenant, deps, dpop.jkt)
  }
}

/**
 * The request's DPoP proof, checked (and its `jti` spent) before the grant runs, so that a
 * refused proof leaves the code or refresh token as it was.
 */
async function checkDpop(
  input: TokenDpopInput | undefined,
  authenticated: AuthenticatedClient,
  tenant: TenantContext,
  deps: GrantDeps,
): Promise<DpopBinding> {
  const proofs = input?.proofs ?? []
  if (proofs.length === 0 && authenticated.client.dpopBoundAccessTokens === true) {
    throw new OAuthError('invalid_dpop_proof', 'this client must send a DPoP proof')
  }
  const proof = await verifyDpopProof(
    {
      proofs,
      method: 'POST',
      path: '/token',
      ...(input?.requestOrigin === undefined ? {} : { requestOrigin: input.requestOrigin }),
    },
    tenant,
    deps,
  )
  const publicClient = authenticated.method === 'none'
  return proof === undefined ? { publicClient } : { jkt: proof.jkt, publicClient }
}
