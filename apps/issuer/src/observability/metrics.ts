import { Counter, Histogram, Registry } from 'prom-client'

/** The issuer's Prometheus metrics, on a registry of their own (one per app). */
export interface Metrics {
  registry: Registry
  tokensIssued: Counter<'tenant' | 'grant_type' | 'alg'>
  tokenErrors: Counter<'tenant' | 'error'>
  httpDuration: Histogram<'method' | 'route' | 'status'>
}

export function createMetrics(registry = new Registry()): Metrics {
  return {
    registry,
    tokensIssued: new Counter({
      name: 'tessera_tokens_issued_total',
      help: 'Access tokens issued, by tenant, grant type and signing algorithm',
      labelNames: ['tenant', 'grant_type', 'alg'],
      registers: [registry],
    }),
    tokenErrors: new Counter({
      name: 'tessera_token_errors_total',
      help: 'Token requests refused, by tenant and OAuth error code',
      labelNames: ['tenant', 'error'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'tessera_http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  }
}
