import { currentDpopNonce } from '@tessera/grants'
import type { GrantDeps, TokenDpopInput } from '@tessera/grants'
import type { Context } from 'koa'
import type { TenantState } from './tenant.js'

/**
 * The DPoP side of a request: every `DPoP` header as received (a repeated one is refused, not
 * joined), and the origin the request was sent to, in the issuer's scheme, which `htu` may
 * name besides the issuer URL.
 */
export function dpopInput(ctx: Context & { state: TenantState }): TokenDpopInput {
  const proofs = ctx.req.headersDistinct.dpop ?? []
  const scheme = new URL(ctx.state.tenant.issuer).protocol
  return { proofs, ...(ctx.host === '' ? {} : { requestOrigin: `${scheme}//${ctx.host}` }) }
}

/**
 * `DPoP-Nonce` on a response of a tenant with server nonces (RFC 9449 §8): the nonce its
 * client's next proof must carry.
 */
export async function setDpopNonce(
  ctx: Context & { state: TenantState },
  deps: GrantDeps,
): Promise<void> {
  const { context } = ctx.state.tenant
  if (context.dpopNonce !== true) return
  ctx.set('DPoP-Nonce', await currentDpopNonce(context.name, deps))
}
