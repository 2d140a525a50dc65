import { createMemoryStore } from '@tessera/store'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { createAdminApiRouter } from '../../src/admin/admin-app.js'
import { createTenantRegistry } from '../../src/tenants/registry.js'
import { documentedOperations, OPENAPI_FILE, readOpenApi } from '../support/admin-api.js'
import { readRepoFile } from '../deploy/manifests.js'

/** The router's operations as `METHOD /path/{param}`. */
function routedOperations(): string[] {
  const router = createAdminApiRouter({
    registry: createTenantRegistry([]),
    keys: createMemoryStore().keys,
    graceMs: 0,
    now: Date.now,
    logger: pino({ level: 'silent' }),
  })
  const operations: string[] = []
  for (const layer of router.stack) {
    // Each path's 405 answer is registered for every method (`router.all`), OPTIONS included;
    // a route's own layer holds its method (and HEAD, which @koa/router adds to GET).
    if (layer.methods.includes('OPTIONS')) continue
    const path = String(layer.path).replace(/:(\w+)/g, '{$1}')
    for (const method of layer.methods) if (method !== 'HEAD') operations.push(`${method} ${path}`)
  }
  return operations.sort()
}

describe(OPENAPI_FILE, () => {
  it('is OpenAPI 3.1', () => {
    expect(readOpenApi().openapi).toMatch(/^3\.1\.\d+$/)
  })

  it('documents exactly the routes the admin router serves', () => {
    const routed = routedOperations()
    expect(routed).toEqual([
      'GET /admin/tenants',
      'GET /admin/tenants/{tenant}/keys',
      'POST /admin/tenants/{tenant}/keys/rotate',
      'POST /admin/tenants/{tenant}/keys/{kid}/revoke',
    ])
    expect([...documentedOperations().keys()].sort()).toEqual(routed)
  })

  it('resolves every $ref it uses', () => {
    const doc = readOpenApi() as unknown as Record<string, unknown>
    const refs = [...readRepoFile(OPENAPI_FILE).matchAll(/\$ref: '#\/([^']+)'/g)]
    expect(refs.length).toBeGreaterThan(10)
    for (const [, pointer] of refs) {
      const target = pointer!
        .split('/')
        .reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], doc)
      expect(target, pointer).toBeDefined()
    }
  })

  it('gives every operation an error answer for a missing token and an unknown tenant', () => {
    for (const [operation, statuses] of documentedOperations()) {
      expect(statuses, operation).toContain('401')
      expect(statuses, operation).toContain('404')
    }
  })
})
