/**
 * The rules pass: checks that span documents (unique names, hosts and client ids) or need the
 * settings (HS256 without a usable secret). It works on facts gathered field by field, so a
 * tenant with an unrelated mistake still takes part and every problem is reported at once.
 *
 * The names, hosts and client ids claimed so far live in a {@link RuleIndex}, which a running
 * issuer keeps: a changed file is checked against the files it did not change in time
 * proportional to what the file claims, whatever the number of tenants.
 *
 * @module
 */
import { normaliseHost } from '../host.js'
import { JWT_ALGORITHMS } from '../model.js'
import type { JwtAlgorithm } from '../model.js'
import { ClientIdSchema, HostSchema, MIN_SECRET_LENGTH, TenantNameSchema } from './fields.js'
import type { FieldPath } from './issues.js'
import { isRecord } from './is-record.js'

/** Reports a problem at a field path of the document being checked. */
export type Report = (path: FieldPath, message: string) => void

/**
 * What the rules need to know about one document, each part present only if valid. Kept as long
 * as the document's claims are in an index: it holds no report callback and no YAML tree.
 */
export interface TenantFacts {
  file: string
  locate: (path: FieldPath) => number
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

/** Where a document is. */
export type FactsOrigin = Pick<TenantFacts, 'file' | 'locate'>

const FILE_NAME_PATH: FieldPath = ['name']
const RESOURCE_NAME_PATH: FieldPath = ['metadata', 'name']

// The facts of ten thousand documents name the same few field paths (`config.hosts.0`,
// `config.clients.1.client_id`): one frozen array each, shared, rather than an array per claim
// kept for as long as the document is served.
const sharedPaths = new Map<string, FieldPath>()
const SHARED_INDEXES = 64
function sharedPath(...path: FieldPath): FieldPath {
  // Past a few hosts or clients a path is rare: made afresh, so the shared set stays small.
  if (path.some((part) => typeof part === 'number' && part >= SHARED_INDEXES)) return path
  const key = path.join('.')
  let shared = sharedPaths.get(key)
  if (shared === undefined) {
    shared = Object.freeze(path) as FieldPath
    sharedPaths.set(key, shared)
  }
  return shared
}

/** Gathers the facts of one document (file form or resource form). */
export function collectFacts(
  document: Record<string, unknown>,
  resource: boolean,
  origin: FactsOrigin,
): TenantFacts {
  const namePath = resource ? RESOURCE_NAME_PATH : FILE_NAME_PATH
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
        hosts.push({ host: normaliseHost(host.data), path: sharedPath(specKey, 'hosts', index) })
      }
    })
  }
  const clientIds: TenantFacts['clientIds'] = []
  if (Array.isArray(spec.clients)) {
    spec.clients.forEach((client: unknown, index) => {
      const clientId = ClientIdSchema.safeParse(isRecord(client) ? client.client_id : undefined)
      if (clientId.success) {
        clientIds.push({
          clientId: clientId.data,
          path: sharedPath(specKey, 'clients', index, 'client_id'),
        })
      }
    })
  }
  const rawAlgorithm = spec.jwt_algorithm
  return {
    // Named one by one, not spread: V8 gave each of ten thousand objects spread from an origin
    // a hidden class of its own (2 MB at ten thousand files).
    file: origin.file,
    locate: origin.locate,
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
    algorithmPath: rawAlgorithm === undefined ? undefined : sharedPath(specKey, 'jwt_algorithm'),
    ownSecret: spec.jwt_secret !== undefined,
  }
}

/**
 * The facts of a document the schema took whole, read off the parsed values (hosts and client ids
 * already lower-cased) instead of validating each field again.
 */
export function factsOfValid(
  valid: { name: string; hosts: readonly string[]; clientIds: readonly string[] },
  algorithm: JwtAlgorithm,
  document: Record<string, unknown>,
  resource: boolean,
  origin: FactsOrigin,
): TenantFacts {
  const specKey = resource ? 'spec' : 'config'
  const spec = document[specKey] as Record<string, unknown>
  return {
    // Not spread, as in collectFacts.
    file: origin.file,
    locate: origin.locate,
    name: valid.name,
    namePath: resource ? RESOURCE_NAME_PATH : FILE_NAME_PATH,
    hosts: valid.hosts.map((host, index) => ({
      host: normaliseHost(host),
      path: sharedPath(specKey, 'hosts', index),
    })),
    clientIds: valid.clientIds.map((clientId, index) => ({
      clientId,
      path: sharedPath(specKey, 'clients', index, 'client_id'),
    })),
    algorithm,
    algorithmPath:
      spec.jwt_algorithm === undefined ? undefined : sharedPath(specKey, 'jwt_algorithm'),
    ownSecret: spec.jwt_secret !== undefined,
  }
}

/**
 * The names, hosts and client ids admitted so far, each with the document that claimed it first.
 * Every operation costs time in proportion to the one document's claims.
 */
export interface RuleIndex {
  /**
   * Checks one document against every document admitted before it (and against the settings),
   * reporting each problem through `report`, then records what it claims that nobody claimed
   * before: the first document keeps a name or host, a later one is reported.
   */
  admit(facts: TenantFacts, report: Report): void
  /** Forgets what `facts` claimed; claims of other documents stay. */
  release(facts: TenantFacts): void
}

/** An empty index; `jwtSecret` is the JWT_SECRET setting, for the HS256 rule. */
export function createRuleIndex(jwtSecret: string | undefined): RuleIndex {
  // Each claim maps to the facts of the document that made it; where in that document is looked
  // up only to word a problem (an object per claim would be kept for every tenant served).
  const names = new Map<string, TenantFacts>()
  const hosts = new Map<string, TenantFacts>()
  const clientIds = new Map<string, TenantFacts>()

  return {
    admit(tenant, report) {
      if (tenant.name !== undefined) {
        const first = names.get(tenant.name)
        if (first) {
          report(
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
        if (!first) hosts.set(host, tenant)
        else if (first !== tenant) {
          report(
            path,
            `host "${host}" is also used by ${label(first)} (${where(first, hostPath(first, host))})`,
          )
        }
      }

      for (const { clientId, path } of tenant.clientIds) {
        const first = clientIds.get(clientId)
        if (!first) clientIds.set(clientId, tenant)
        else if (first === tenant) {
          const firstPath = clientIdPath(first, clientId)
          report(
            path,
            `duplicate client_id "${clientId}" (also used by ${firstPath.join('.')}, ${where(tenant, firstPath)})`,
          )
        } else {
          report(
            path,
            `client_id "${clientId}" is also used by ${label(first)} (${where(first, clientIdPath(first, clientId))})`,
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
        if (problem) report(tenant.algorithmPath ?? [], `${label(tenant)} uses HS256: ${problem}`)
      }
    },
    release(tenant) {
      const drop = (claims: Map<string, TenantFacts>, key: string) => {
        if (claims.get(key) === tenant) claims.delete(key)
      }
      if (tenant.name !== undefined) drop(names, tenant.name)
      for (const { host } of tenant.hosts) drop(hosts, host)
      for (const { clientId } of tenant.clientIds) drop(clientIds, clientId)
    },
  }
}

/** Runs every cross-document rule over `documents` in order, reporting through each's `report`. */
export function checkRules(
  documents: readonly { facts: TenantFacts; report: Report }[],
  jwtSecret: string | undefined,
): void {
  const index = createRuleIndex(jwtSecret)
  for (const { facts, report } of documents) index.admit(facts, report)
}

/** Where `owner` names `host` first (the claim it made). */
function hostPath(owner: TenantFacts, host: string): FieldPath {
  return owner.hosts.find((claim) => claim.host === host)?.path ?? []
}

/** Where `owner` names `clientId` first (the claim it made). */
function clientIdPath(owner: TenantFacts, clientId: string): FieldPath {
  return owner.clientIds.find((claim) => claim.clientId === clientId)?.path ?? []
}

function label(tenant: TenantFacts): string {
  return tenant.name === undefined
    ? `the tenant at ${where(tenant, [])}`
    : `tenant "${tenant.name}"`
}

function where(tenant: TenantFacts, path: FieldPath): string {
  return `${tenant.file}:${tenant.locate(path)}`
}
