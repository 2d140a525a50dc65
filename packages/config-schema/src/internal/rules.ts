/**
 * The rules pass: checks that span documents (unique names, hosts and client ids) or need the
 * settings (HS256 without a usable secret). It works on facts gathered field by field, so a
 * tenant with an unrelated mistake still takes part and every problem is reported at once.
 *
 * @module
 */
import { normaliseHost } from '../host.js'
import { JWT_ALGORITHMS } from '../model.js'
import type { JwtAlgorithm } from '../model.js'
import { ClientIdSchema, HostSchema, MIN_SECRET_LENGTH, TenantNameSchema } from './fields.js'
import type { FieldPath } from './issues.js'
import { isRecord } from './is-record.js'

/** What the rules need to know about one document, each part present only if valid. */
export interface TenantFacts {
  file: string
  locate: (path: FieldPath) => number
  report: (path: FieldPath, message: string) => void
  name: string | undefined
  namePath: FieldPath
  hosts: { host: string; path: FieldPath }[]
  clientIds: { clientId: string; path: FieldPath }[]
  /** Undefined when `jwt_algorithm` is invalid (the schema reports that). */
  algorithm: JwtAlgorithm | undefined
  /** The path of `jwt_algorithm` when the document names it. */
  algorithmPath: FieldPath | undefined
  ownSecret: boolean
}

/** Where a document is, and how to report against it. */
export type FactsOrigin = Pick<TenantFacts, 'file' | 'locate' | 'report'>

/** Gathers the facts of one document (file form or resource form). */
export function collectFacts(
  document: Record<string, unknown>,
  resource: boolean,
  origin: FactsOrigin,
): TenantFacts {
  const namePath = resource ? ['metadata', 'name'] : ['name']
  const metadata = isRecord(document.metadata) ? document.metadata : {}
  const name = TenantNameSchema.safeParse(resource ? metadata.name : document.name)
  const specKey = resource ? 'spec' : 'config'
  const rawSpec = document[specKey]
  const spec = isRecord(rawSpec) ? rawSpec : {}

  const hosts: TenantFacts['hosts'] = []
  if (Array.isArray(spec.hosts)) {
    spec.hosts.forEach((raw: unknown, index) => {
      const host = HostSchema.safeParse(raw)
      if (host.success) {
        hosts.push({ host: normaliseHost(host.data), path: [specKey, 'hosts', index] })
      }
    })
  }
  const clientIds: TenantFacts['clientIds'] = []
  if (Array.isArray(spec.clients)) {
    spec.clients.forEach((client: unknown, index) => {
      const clientId = ClientIdSchema.safeParse(isRecord(client) ? client.client_id : undefined)
      if (clientId.success) {
        clientIds.push({ clientId: clientId.data, path: [specKey, 'clients', index, 'client_id'] })
      }
    })
  }
  const rawAlgorithm = spec.jwt_algorithm
  return {
    ...origin,
    name: name.success ? name.data : undefined,
    namePath,
    hosts,
    clientIds,
    // Without a config mapping there is nothing to say about the algorithm (the schema reports it).
    algorithm: !isRecord(rawSpec)
      ? undefined
      : rawAlgorithm === undefined
        ? 'HS256'
        : JWT_ALGORITHMS.find((algorithm) => algorithm === rawAlgorithm),
    algorithmPath: rawAlgorithm === undefined ? undefined : [specKey, 'jwt_algorithm'],
    ownSecret: spec.jwt_secret !== undefined,
  }
}

/** Runs every cross-document rule, reporting through each document's `report`. */
export function checkRules(facts: readonly TenantFacts[], jwtSecret: string | undefined): void {
  const names = new Map<string, TenantFacts>()
  const hosts = new Map<string, { owner: TenantFacts; path: FieldPath }>()
  const clientIds = new Map<string, { owner: TenantFacts; path: FieldPath }>()

  for (const tenant of facts) {
    if (tenant.name !== undefined) {
      const first = names.get(tenant.name)
      if (first) {
        tenant.report(
          tenant.namePath,
          `duplicate tenant name "${tenant.name}" (also defined at ${where(first, first.namePath)})`,
        )
      } else {
        names.set(tenant.name, tenant)
      }
    }

    // Hosts are compared without the port, as the Host header is matched. Repeats
    // within one tenant are the schema's business.
    for (const { host, path } of tenant.hosts) {
      const first = hosts.get(host)
      if (!first) hosts.set(host, { owner: tenant, path })
      else if (first.owner !== tenant) {
        tenant.report(
          path,
          `host "${host}" is also used by ${label(first.owner)} (${where(first.owner, first.path)})`,
        )
      }
    }

    for (const { clientId, path } of tenant.clientIds) {
      const first = clientIds.get(clientId)
      if (!first) clientIds.set(clientId, { owner: tenant, path })
      else if (first.owner === tenant) {
        tenant.report(
          path,
          `duplicate client_id "${clientId}" (also used by ${first.path.join('.')}, ${where(tenant, first.path)})`,
        )
      } else {
        tenant.report(
          path,
          `client_id "${clientId}" is also used by ${label(first.owner)} (${where(first.owner, first.path)})`,
        )
      }
    }

    // HS256 signs with JWT_SECRET unless the tenant names its own secret.
    if (tenant.algorithm === 'HS256' && !tenant.ownSecret) {
      const problem =
        jwtSecret === undefined || jwtSecret === ''
          ? 'JWT_SECRET is not set'
          : jwtSecret.length < MIN_SECRET_LENGTH
            ? `JWT_SECRET must be at least ${MIN_SECRET_LENGTH} characters`
            : undefined
      if (problem)
        tenant.report(tenant.algorithmPath ?? [], `${label(tenant)} uses HS256: ${problem}`)
    }
  }
}

function label(tenant: TenantFacts): string {
  return tenant.name === undefined
    ? `the tenant at ${where(tenant, [])}`
    : `tenant "${tenant.name}"`
}

function where(tenant: TenantFacts, path: FieldPath): string {
  return `${tenant.file}:${tenant.locate(path)}`
}
