/**
 * Reads the files of `deploy/` for the deploy tests: every YAML document of a manifest, parsed
 * strictly, with the few Kubernetes shapes the tests look into.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'

export const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
export const KUBERNETES = `${REPO}deploy/kubernetes/`

/** The manifests of deploy/kubernetes, by file name. */
export const MANIFEST_FILES = [
  'crd.yaml',
  'rbac.yaml',
  'deployment.yaml',
  'example-tenant.yaml',
] as const

export interface Metadata {
  name: string
  namespace?: string
  labels?: Record<string, string>
}

export interface Manifest {
  apiVersion: string
  kind: string
  metadata: Metadata
}

export interface EnvVar {
  name: string
  value?: string
  valueFrom?: {
    secretKeyRef?: { name: string; key: string }
    fieldRef?: { fieldPath: string }
  }
}

export interface Probe {
  httpGet?: { path: string; port: number | string }
}

export interface Container {
  name: string
  image: string
  args?: string[]
  ports: { name?: string; containerPort: number }[]
  env: EnvVar[]
  startupProbe?: Probe
  readinessProbe?: Probe
  livenessProbe?: Probe
  securityContext?: {
    allowPrivilegeEscalation?: boolean
    readOnlyRootFilesystem?: boolean
    runAsNonRoot?: boolean
    runAsUser?: number
    capabilities?: { drop?: string[]; add?: string[] }
  }
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[]
}

export interface Deployment extends Manifest {
  spec: {
    replicas: number
    selector: { matchLabels: Record<string, string> }
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> }
      spec: {
        serviceAccountName: string
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }
        containers: Container[]
        volumes?: { name: string; configMap?: { name: string } }[]
      }
    }
  }
}

export interface Service extends Manifest {
  spec: {
    selector: Record<string, string>
    ports: { name?: string; port: number; targetPort: number | string }[]
  }
}

export interface PodDisruptionBudget extends Manifest {
  spec: { selector: { matchLabels: Record<string, string> } }
}

export interface Role extends Manifest {
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]
}

export interface RoleBinding extends Manifest {
  roleRef: { apiGroup: string; kind: string; name: string }
  subjects: { kind: string; name: string; namespace?: string }[]
}

export interface ConfigMap extends Manifest {
  data: Record<string, string>
}

export interface PrinterColumn {
  name: string
  type: string
  jsonPath: string
}

export interface CustomResourceDefinition extends Manifest {
  spec: {
    group: string
    scope: string
    names: { kind: string; listKind: string; plural: string; singular: string }
    versions: {
      name: string
      served: boolean
      storage: boolean
      schema: { openAPIV3Schema: Record<string, unknown> }
      additionalPrinterColumns?: PrinterColumn[]
    }[]
  }
}

/** The text of a file of the repository. */
export function readRepoFile(path: string): string {
  return readFileSync(`${REPO}${path}`, 'utf8')
}

/**
 * Every document of a YAML text, as plain values; throws on any YAML error or warning (with
 * the file name), so a test sees a broken manifest as a failure with its cause.
 */
export function parseManifests(text: string, file: string): Manifest[] {
  return parseAllDocuments(text).flatMap((document) => {
    const problems = [...document.errors, ...document.warnings]
    if (problems.length > 0) {
      throw new Error(`${file}: ${problems.map((problem) => problem.message).join('; ')}`)
    }
    const value = document.toJS() as Manifest | null
    return value === null ? [] : [value]
  })
}

/** The documents of one manifest file of deploy/kubernetes. */
export function readManifests(file: (typeof MANIFEST_FILES)[number]): Manifest[] {
  return parseManifests(readFileSync(`${KUBERNETES}${file}`, 'utf8'), file)
}

/** The one document of `kind` in a manifest file; throws unless there is exactly one. */
export function findManifest<T extends Manifest>(manifests: readonly Manifest[], kind: string): T {
  const found = manifests.filter((manifest) => manifest.kind === kind)
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`)
  return found[0] as T
}

/** Resolves a probe or Service port (a number or a port name) to the container's port number. */
export function containerPort(container: Container, port: number | string): number | undefined {
  if (typeof port === 'number') {
    return container.ports.some((p) => p.containerPort === port) ? port : undefined
  }
  return container.ports.find((p) => p.name === port)?.containerPort
}
