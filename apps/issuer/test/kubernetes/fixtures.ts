import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { postForm, send } from '../support/http.js'
import type { HttpResponse } from '../support/http.js'
import { FIXTURES } from '../support/issuer.js'
import type { TenantInput } from './fake-api-server.js'

export const NAMESPACE = 'tenants'

export const ACME = {
  host: 'acme.test',
  client: 'aaaaaaaa-0000-4000-8000-000000000001',
  secret: 'acme-client-secret',
}
export const GLOBEX = {
  host: 'globex.test',
  client: 'bbbbbbbb-0000-4000-8000-000000000002',
  secret: 'globex-client-secret',
}
export const INITECH = {
  host: 'initech.test',
  client: 'cccccccc-0000-4000-8000-000000000003',
  secret: 'initech-client-secret',
}

/** A password-grant tenant whose one client is `client`, served at `hosts`. */
export function tenant(
  name: string,
  hosts: string[],
  client: { client: string; secret: string },
  spec: Record<string, unknown> = {},
): TenantInput {
  return {
    name,
    spec: {
      hosts,
      providers: ['users.mjs'],
      clients: [
        {
          client_id: client.client,
          client_secret: client.secret,
          grant_types: ['password'],
          scopes: ['read'],
        },
      ],
      ...spec,
    },
  }
}

/**
 * The mounted provider directory: `users.mjs` (alice / alice-password) and `broken.mjs`, which
 * throws when imported.
 */
export function providerDirectory(dir: string): string {
  const providers = join(dir, 'providers')
  mkdirSync(providers, { recursive: true })
  copyFileSync(join(FIXTURES, 'basic', 'providers', 'users.mjs'), join(providers, 'users.mjs'))
  writeFileSync(join(providers, 'broken.mjs'), "throw new Error('this provider is broken')\n")
  return providers
}

/** RFC 8414 metadata of the tenant at `host`. */
export function metadata(url: string, host: string): Promise<HttpResponse> {
  return send(url, { path: '/.well-known/oauth-authorization-server', host })
}

/** A password-grant token request for alice. */
export function passwordToken(
  url: string,
  host: string,
  client: { client: string; secret: string },
): Promise<HttpResponse> {
  return postForm(url, host, {
    grant_type: 'password',
    username: 'alice',
    password: 'alice-password',
    client_id: client.client,
    client_secret: client.secret,
  })
}

/** Asserts that `host` is served, with `issuer` as its issuer URL. */
export async function expectServed(url: string, host: string, issuer: string): Promise<void> {
  const response = await metadata(url, host)
  expect(response.status).toBe(200)
  expect((response.json as { issuer: string }).issuer).toBe(issuer)
}

/** Asserts that no tenant is served at `host`. */
export async function expectNotServed(url: string, host: string): Promise<void> {
  const response = await metadata(url, host)
  expect(response.status).toBe(404)
  expect(response.json).toMatchObject({ error: 'invalid_request' })
}
