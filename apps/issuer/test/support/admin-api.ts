import { expect } from 'vitest'
import { parse } from 'yaml'
import { readRepoFile } from '../deploy/manifests.js'
import { send } from './http.js'
import type { HttpResponse } from './http.js'

/** An ADMIN_TOKEN for tests: 44 characters, as `openssl rand -base64 32` makes them. */
export const ADMIN_TOKEN = 'QWRtaW4tdG9rZW4tZm9yLXRlc3RzLW9ubHktMDEyMzQ1='

export const OPENAPI_FILE = 'docs/admin-api.openapi.yaml'

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

export interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, unknown>>
}

/** docs/admin-api.openapi.yaml, parsed. */
export function readOpenApi(): OpenApiDocument {
  return parse(readRepoFile(OPENAPI_FILE)) as OpenApiDocument
}

/** Every documented operation as `METHOD /path/{param}`, with its documented status codes. */
export function documentedOperations(doc: OpenApiDocument = readOpenApi()): Map<string, string[]> {
  const operations = new Map<string, string[]>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as { responses?: Record<string, unknown> } | undefined
      if (operation === undefined) continue
      operations.set(`${method.toUpperCase()} ${path}`, Object.keys(operation.responses ?? {}))
    }
  }
  return operations
}

/** The documented path template a concrete path matches, if any. */
export function templateOf(path: string, doc: OpenApiDocument = readOpenApi()): string | undefined {
  const bare = path.split('?', 1)[0] ?? path
  return Object.keys(doc.paths).find((template) =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare),
  )
}

/**
 * Calls the admin API and remembers `METHOD template → status` for each documented operation,
 * so a test can hold the documentation to what the server answered.
 */
export function createAdminClient(baseUrl: () => string) {
  const doc = readOpenApi()
  const observed = new Map<string, Set<number>>()
  let made = 0
  const call = async (
    method: string,
    path: string,
    options: { token?: string | null; headers?: Record<string, string>; body?: string } = {},
  ): Promise<HttpResponse> => {
    const token = options.token === undefined ? ADMIN_TOKEN : options.token
    const headers: Record<string, string> = { ...options.headers }
    if (token !== null) headers.authorization = `Bearer ${token}`
    if (options.body !== undefined) headers['content-type'] ??= 'application/json'
    made++
    const res = await send(baseUrl(), {
      method,
      path,
      host: 'admin.test',
      headers,
      ...(options.body === undefined ? {} : { body: options.body }),
    })
    const template = templateOf(path, doc)
    if (template !== undefined && doc.paths[template]?.[method.toLowerCase()] !== undefined) {
      const key = `${method} ${template}`
      const statuses = observed.get(key) ?? new Set<number>()
      statuses.add(res.status)
      observed.set(key, statuses)
    }
    return res
  }
  return { call, calls: () => made, observed }
}

/** Asserts an RFC 9457 answer: status, media type, exactly the four members, no stack. */
export function expectProblem(
  res: HttpResponse,
  status: number,
  type?: string,
): Record<string, unknown> {
  expect(res.status, res.text).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(res.headers['cache-control']).toBe('no-store')
  const body = res.json as Record<string, unknown>
  expect(Object.keys(body).sort()).toEqual(['detail', 'status', 'title', 'type'])
  expect(body.status).toBe(status)
  expect(typeof body.title).toBe('string')
  expect(typeof body.detail).toBe('string')
  if (type !== undefined) expect(body.type).toBe(type)
  expect(res.text).not.toMatch(/at .*\.js:\d+|Error:/)
  return body
}

/** Asserts that every status observed on a documented operation is documented for it. */
export function expectDocumented(observed: ReadonlyMap<string, ReadonlySet<number>>): void {
  const documented = documentedOperations()
  for (const [operation, statuses] of observed) {
    for (const status of statuses) {
      expect(documented.get(operation), `${operation} → ${status}`).toContain(String(status))
    }
  }
}
