import type { TenantRuntime } from '../tenants/runtime.js'

/** Koa state after tenant resolution (see `createRouter`). */
export interface TenantState {
  tenant: TenantRuntime
}
