/**
 * @tessera/issuer — the Koa service and the `tessera` CLI. Exported for tests and embedding.
 *
 * @module
 */
export { createAdminApp } from './admin/admin-app.js'
export type { AdminAppDeps } from './admin/admin-app.js'
export { createApp, createKoaApp } from './app.js'
export type { AppDeps, KoaAppOptions } from './app.js'
export { createIssuer } from './issuer.js'
export type { Issuer, IssuerOptions } from './issuer.js'
export type { TenantChanges, TenantSource, TenantTarget } from './sources/source.js'
export { createLogger } from './observability/logger.js'
export { createMetrics } from './observability/metrics.js'
export type { Metrics } from './observability/metrics.js'
export { hashPassword, verifyPassword } from './providers/password-hash.js'
export type { ProviderTools } from './providers/scripts.js'
