import type { TenantRuntime } from '../tenants.js'

/** Koa state after tenant resolution (see `createRouter`). */
export interface TenantState {
  tenant: TenantRuntime
}
