import {
  admitRegistration,
  deleteRegistration,
  OAuthError,
  parseRegistrationBody,
  readRegistration,
  registerClient,
  updateRegistration,
} from '@tessera/grants'
import type { ClientInformation, RegistrationDeps, RegistrationTenant } from '@tessera/grants'
import type { Context, Middleware } from 'koa'
import { readTextBody } from '../http/body.js'
import { HttpError } from '../http/http-error.js'
import type { TenantState } from '../http/tenant.js'
import type { TenantRuntime } from '../tenants/runtime.js'

/** What the registration endpoints need. */
export interface RegisterRouteDeps {
  registration: RegistrationDeps
  maxBodyBytes: number
}

/** Whether a tenant serves /register and its registration client URIs. */
export function registrationEnabled(runtime: TenantRuntime): boolean {
  return runtime.tenant.dynamicClients?.registration === true
}

function registrationTenant(runtime: TenantRuntime): RegistrationTenant {
  const config = runtime.tenant.dynamicClients
  // The router serves these paths only where registration is on (registrationEnabled).
  if (config === undefined)
    throw new TypeError(`tenant ${runtime.tenant.name} has no dynamic_clients`)
  return { name: runtime.tenant.name, issuer: runtime.issuer, config }
}

/**
 * The JSON body of a registration request. Every problem with it, its size and encoding
 * included, is the client's metadata at fault: 400 `invalid_client_metadata` (RFC 7591 §3.2.2).
 */
async function readMetadata(ctx: Context, maxBodyBytes: number): Promise<unknown> {
  let text: string
  try {
    text = await readTextBody(ctx, maxBodyBytes)
  } catch (error) {
    if (error instanceof HttpError && error.status < 500) {
      throw new OAuthError('invalid_client_metadata', error.description)
    }
    throw error
  }
  return parseRegistrationBody(text, ctx.get('Content-Type') || undefined)
}

/** The answer of every registration endpoint: JSON, never cached (RFC 7591 §3.2.1). */
function answer(ctx: Context, status: 200 | 201, body: ClientInformation): void {
  ctx.set('Cache-Control', 'no-store')
  ctx.set('Pragma', 'no-cache')
  ctx.status = status
  ctx.body = body
}

/**
 * POST /register (RFC 7591 §3): counted against the address's registrations, the initial access
 * token checked when the tenant requires one, then the metadata validated and the client stored.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-3
 */
export function registerRoute(deps: RegisterRouteDeps): Middleware<TenantState> {
  return async (ctx) => {
    const tenant = registrationTenant(ctx.state.tenant)
    await admitRegistration(
      { authorization: ctx.get('Authorization') || undefined, address: ctx.ip },
      tenant,
      deps.registration,
    )
    const body = await readMetadata(ctx, deps.maxBodyBytes)
    answer(ctx, 201, await registerClient(body, tenant, deps.registration))
  }
}

/** The client_id of a registration client URI and the registration access token sent. */
function management(ctx: Context): { clientId: string; authorization: string | undefined } {
  const { client_id: clientId } = ctx.params as { client_id: string }
  return { clientId, authorization: ctx.get('Authorization') || undefined }
}

/**
 * GET, PUT and DELETE /register/:client_id: the registration client URI (RFC 7592), under the
 * registration access token of the client.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7592#section-2
 */
export function registrationClientRoutes(deps: RegisterRouteDeps): {
  GET: Middleware<TenantState>
  PUT: Middleware<TenantState>
  DELETE: Middleware<TenantState>
} {
  return {
    GET: async (ctx) => {
      const tenant = registrationTenant(ctx.state.tenant)
      answer(ctx, 200, await readRegistration(management(ctx), tenant, deps.registration))
    },
    PUT: async (ctx) => {
      const tenant = registrationTenant(ctx.state.tenant)
      const request = management(ctx)
      // RFC 7592 §2.2: the token is checked before the body could say anything.
      await readRegistration(request, tenant, deps.registration)
      const body = await readMetadata(ctx, deps.maxBodyBytes)
      answer(ctx, 200, await updateRegistration({ ...request, body }, tenant, deps.registration))
    },
    DELETE: async (ctx) => {
      const tenant = registrationTenant(ctx.state.tenant)
      await deleteRegistration(management(ctx), tenant, deps.registration)
      ctx.set('Cache-Control', 'no-store')
      ctx.status = 204
    },
  }
}
