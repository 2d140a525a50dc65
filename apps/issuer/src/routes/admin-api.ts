import type { KeyStore } from '@tessera/keys'
import type { Context, Middleware } from 'koa'
import type { Logger } from 'pino'
import * as z from 'zod'
import { readTextBody } from '../http/body.js'
import { ProblemError } from '../http/problem.js'
import type { RouteHandlers } from '../http/router.js'
import {
  findTenant,
  KEY_PROPAGATION_SECONDS,
  listTenantKeys,
  revokeTenantKey,
  rotateTenantKey,
} from '../keys/key-admin.js'
import type { KeyAdminOptions } from '../keys/key-admin.js'
import type { TenantRegistry, TenantRuntime } from '../tenants/runtime.js'

/**
 * The largest admin request body. The API takes at most an empty JSON object; the room left is
 * for clients that send one pretty-printed or with a trailing newline.
 */
export const ADMIN_MAX_BODY_BYTES = 4096

/** What the admin API routes need; the issuer builds it from its settings and store. */
export interface AdminApiDeps {
  registry: TenantRegistry
  keys: KeyStore
  /** JWKS_GRACE_HOURS in milliseconds. */
  graceMs: number
  /** KEY_ENCRYPTION_SECRET, when set. */
  encryptionSecret?: string
  /** KEY_PUBLISH_AHEAD_SECONDS in milliseconds. */
  publishAheadMs?: number
  now: () => number
  logger: Logger
}

/** `?now=true` of a rotation: sign with the new key at once. @throws ProblemError 400 */
function rotateNow(ctx: Context): boolean {
  const value = ctx.query.now
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  throw new ProblemError(400, 'the query parameter now must be true or false, given once')
}

/** The router's parameters of the tenant and key paths. */
interface Params {
  tenant?: string
  kid?: string
}

// Rotate and revoke take no parameters today; an object with fields is refused rather than
// ignored, so a client that believes it set something learns that it did not.
const EmptyBodySchema = z.strictObject({})

/**
 * Reads the body of a POST: nothing, or a JSON object without fields.
 *
 * @throws HttpError 413 over {@link ADMIN_MAX_BODY_BYTES}, 415 for another encoding or charset;
 * ProblemError 415 for a body that is not JSON, 400 for malformed JSON or any field
 */
async function readEmptyBody(ctx: Context): Promise<void> {
  const text = await readTextBody(ctx, ADMIN_MAX_BODY_BYTES)
  if (text.trim() === '') return
  if (ctx.is('application/json', '+json') === false) {
    throw new ProblemError(415, 'send a JSON body (Content-Type: application/json) or none', {
      Accept: 'application/json',
    })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ProblemError(400, 'the request body is not valid JSON')
  }
  if (!EmptyBodySchema.safeParse(parsed).success) {
    throw new ProblemError(400, 'the request body must be an empty JSON object ({}) or nothing')
  }
}

/** Describes a tenant for `GET /admin/tenants`: names and hosts only, never secrets or keys. */
function describeTenant(runtime: TenantRuntime) {
  const { tenant } = runtime
  return {
    name: tenant.name,
    hosts: tenant.hosts,
    issuer: runtime.issuer,
    jwt_algorithm: tenant.jwtAlgorithm,
    clients: tenant.clients.map((client) => ({
      client_id: client.clientId,
      ...(client.name === undefined ? {} : { client_name: client.name }),
    })),
  }
}

/**
 * The routes of the admin API, by path and method, for `addRoutes`. The key routes run the same
 * operations as `tessera keys list|rotate|revoke` (see key-admin.ts). A change made here is
 * loaded into this process's key ring at once; other replicas read it on their next key poll.
 */
export function adminApiRoutes(deps: AdminApiDeps): Record<string, RouteHandlers<unknown>> {
  const options: KeyAdminOptions = {
    store: deps.keys,
    graceMs: deps.graceMs,
    now: deps.now,
    ...(deps.publishAheadMs === undefined ? {} : { publishAheadMs: deps.publishAheadMs }),
    ...(deps.encryptionSecret === undefined ? {} : { encryptionSecret: deps.encryptionSecret }),
  }
  const runtimeOf = (ctx: Context): TenantRuntime => {
    const runtimes = deps.registry.all()
    const tenant = findTenant(
      runtimes.map((runtime) => runtime.tenant),
      (ctx.params as Params).tenant ?? '',
    )
    const runtime = runtimes.find((candidate) => candidate.tenant === tenant)
    if (runtime === undefined) throw new TypeError(`tenant ${tenant.name} has no runtime`)
    return runtime
  }

  // Changes to one tenant's keys run one at a time in this process: ten rotations at once make
  // ten keys (.2, .3, ...), where racing them would have several converge on one new kid.
  // Across replicas, the store's insert-if-absent keeps one kid to one key.
  const queues = new Map<string, Promise<unknown>>()
  const serially = <T>(tenant: string, change: () => Promise<T>): Promise<T> => {
    const next = (queues.get(tenant) ?? Promise.resolve()).then(change)
    const settled = next.catch(() => undefined)
    queues.set(tenant, settled)
    void settled.then(() => {
      if (queues.get(tenant) === settled) queues.delete(tenant)
    })
    return next
  }

  /** Loads the change into this process's ring; a failure leaves it to the next poll. */
  const reload = async (runtime: TenantRuntime): Promise<void> => {
    try {
      await runtime.keyRing.reload()
    } catch (error) {
      deps.logger.warn(
        { tenant: runtime.tenant.name, err: error },
        'reloading keys after an admin change failed; the next key poll retries',
      )
    }
  }

  const tenants: Middleware = (ctx) => {
    ctx.body = { tenants: deps.registry.all().map(describeTenant) }
  }

  const keys: Middleware = async (ctx) => {
    const { tenant } = runtimeOf(ctx)
    ctx.body = {
      tenant: tenant.name,
      jwt_algorithm: tenant.jwtAlgorithm,
      keys: await listTenantKeys(tenant, options),
    }
  }

  const rotate: Middleware = async (ctx) => {
    const runtime = runtimeOf(ctx)
    const now = rotateNow(ctx)
    await readEmptyBody(ctx)
    const report = await serially(runtime.tenant.name, async () => {
      const result = await rotateTenantKey(runtime.tenant, options, { now })
      await reload(runtime)
      return result
    })
    ctx.status = 201
    ctx.body = { ...report, propagatesWithinSeconds: KEY_PROPAGATION_SECONDS }
  }

  const revoke: Middleware = async (ctx) => {
    const runtime = runtimeOf(ctx)
    await readEmptyBody(ctx)
    const kid = (ctx.params as Params).kid ?? ''
    const report = await serially(runtime.tenant.name, async () => {
      const result = await revokeTenantKey(runtime.tenant, kid, options)
      if (result.changed) await reload(runtime)
      return result
    })
    ctx.body = { ...report, propagatesWithinSeconds: KEY_PROPAGATION_SECONDS }
  }

  return {
    '/admin/tenants': { GET: tenants },
    '/admin/tenants/:tenant/keys': { GET: keys },
    '/admin/tenants/:tenant/keys/rotate': { POST: rotate },
    '/admin/tenants/:tenant/keys/:kid/revoke': { POST: revoke },
  }
}
