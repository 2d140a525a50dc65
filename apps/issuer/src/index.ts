/**
 * @tessera/issuer — the Koa service and the `tessera` CLI. Exported for tests and embedding.
 *
 * @module
 */
export { createAdminApp } from './admin.js'
export type { AdminAppDeps } from './admin.js'
export { createApp, createKoaApp } from './app.js'
export type { AppDeps, KoaAppOptions } from './app.js'
export { createIssuer } from './issuer.js'
export type { Issuer, IssuerOptions } from './issuer.js'
export type { TenantChanges, TenantSource, TenantTarget } from './sources/source.js'
export { createLogger } from './logger.js'
export { createMetrics } from './metrics.js'
export type { Metrics } from './metrics.js'
export { hashPassword, verifyPassword } from './password-hash.js'
export type { ProviderTools } from './providers.js'
