import { readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { parseConfig, parseSettings, SETTING_NAMES } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import type {
  ConfigMap,
  CustomResourceDefinition,
  Deployment,
  Manifest,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Service,
} from './manifests.js'
import {
  containerPort,
  findManifest,
  MANIFEST_FILES,
  readManifests,
  readRepoFile,
  REPO,
} from './manifests.js'

const SECRET = 'tessera-secrets'
// The variable of each key of the Secret, as docs/deploy.md lists them.
const SECRET_KEYS: Record<string, string> = {
  JWT_SECRET: 'jwt-secret',
  DATABASE_URL: 'database-url',
  KEY_ENCRYPTION_SECRET: 'key-encryption-secret',
}
// The Kubernetes source's setting, whether or not SETTING_NAMES lists it.
const KNOWN_VARIABLES = new Set<string>([...SETTING_NAMES, 'TESSERA_KUBERNETES_NAMESPACE'])

const deploymentFile = () => readManifests('deployment.yaml')
const deployment = () => findManifest<Deployment>(deploymentFile(), 'Deployment')
const container = () => {
  const containers = deployment().spec.template.spec.containers
  expect(containers).toHaveLength(1)
  return containers[0]!
}
const env = () => new Map(container().env.map((variable) => [variable.name, variable]))
const crd = () =>
  findManifest<CustomResourceDefinition>(readManifests('crd.yaml'), 'CustomResourceDefinition')
const exampleTenant = () => readManifests('example-tenant.yaml')

const kindsAndNames = (manifests: readonly Manifest[]) =>
  manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)

describe('deploy/kubernetes manifests', () => {
  it.each(MANIFEST_FILES)(
    '%s parses, every document a named resource in no fixed namespace',
    (file) => {
      const manifests = readManifests(file)
      expect(manifests.length).toBeGreaterThan(0)
      for (const manifest of manifests) {
        expect(manifest.apiVersion, file).toBeTypeOf('string')
        expect(manifest.kind, file).toBeTypeOf('string')
        expect(manifest.metadata.name, file).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
        // Applied in whatever namespace the issuer runs in (kubectl -n …).
        expect(manifest.metadata.namespace, `${file}: ${manifest.kind}`).toBeUndefined()
      }
    },
  )

  it('hold the resources the docs name', () => {
    expect(kindsAndNames(readManifests('crd.yaml'))).toEqual([
      'CustomResourceDefinition/tenants.tessera.dev',
    ])
    expect(kindsAndNames(readManifests('rbac.yaml'))).toEqual([
      'ServiceAccount/tessera-issuer',
      'Role/tessera-issuer',
      'RoleBinding/tessera-issuer',
    ])
    expect(kindsAndNames(deploymentFile())).toEqual([
      'Deployment/tessera-issuer',
      'Service/tessera-issuer',
      'PodDisruptionBudget/tessera-issuer',
    ])
    expect(kindsAndNames(exampleTenant())).toEqual(['ConfigMap/tessera-providers', 'Tenant/acme'])
    const docs = readRepoFile('docs/deploy.md')
    for (const name of ['tenants.tessera.dev', 'tessera-issuer', 'tessera-providers', SECRET]) {
      expect(docs).toContain(name)
    }
  })
})

describe('Deployment tessera-issuer', () => {
  it('runs two replicas of `tessera start`', () => {
    expect(deployment().spec.replicas).toBe(2)
    expect(container().args).toEqual(['start'])
  })

  it('selects its own pods, and so do the Service and the PodDisruptionBudget', () => {
    const labels = deployment().spec.template.metadata.labels
    const service = findManifest<Service>(deploymentFile(), 'Service')
    const budget = findManifest<PodDisruptionBudget>(deploymentFile(), 'PodDisruptionBudget')
    for (const selector of [
      deployment().spec.selector.matchLabels,
      service.spec.selector,
      budget.spec.selector.matchLabels,
    ]) {
      expect(Object.keys(selector).length).toBeGreaterThan(0)
      expect(labels).toMatchObject(selector)
    }
  })

  it('is reached through the Service on port 80, sent to the container port 3000', () => {
    const service = findManifest<Service>(deploymentFile(), 'Service')
    const port = service.spec.ports.find(({ name }) => name === 'http')
    expect(port?.port).toBe(80)
    expect(containerPort(container(), port!.targetPort)).toBe(3000)
    expect(env().get('PORT')?.value).toBe('3000')
  })

  it('exposes the admin listener as the port named metrics, for scraping', () => {
    expect(containerPort(container(), 'metrics')).toBe(9464)
    expect(env().get('ADMIN_PORT')?.value).toBe('9464')
    // On the pod's address: the default, 127.0.0.1, could not be scraped.
    expect(env().get('ADMIN_HOST')?.value).toBe('0.0.0.0')
    expect(deployment().spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    })
    // ServiceMonitor-ready: the Service names the port too.
    const service = findManifest<Service>(deploymentFile(), 'Service')
    expect(service.spec.ports.map(({ name }) => name)).toEqual(['http', 'metrics'])
    const metrics = service.spec.ports.find(({ name }) => name === 'metrics')
    expect(containerPort(container(), metrics!.targetPort)).toBe(9464)
  })

  it('probes /readyz for readiness and /healthz for liveness, on the container port', () => {
    const { readinessProbe, livenessProbe, startupProbe } = container()
    expect(readinessProbe?.httpGet?.path).toBe('/readyz')
    expect(livenessProbe?.httpGet?.path).toBe('/healthz')
    for (const probe of [readinessProbe, livenessProbe, startupProbe]) {
      if (probe === undefined) continue
      expect(['/readyz', '/healthz']).toContain(probe.httpGet?.path)
      expect(containerPort(container(), probe.httpGet!.port)).toBe(Number(env().get('PORT')?.value))
    }
  })

  it('sets only variables the issuer knows', () => {
    for (const name of env().keys()) expect(KNOWN_VARIABLES, name).toContain(name)
    expect(env().size).toBe(container().env.length)
  })

  it('reads Tenant resources of its own namespace, with provider scripts from a ConfigMap', () => {
    expect(env().get('TESSERA_CONFIG_SOURCE')?.value).toBe('kubernetes')
    expect(env().get('TESSERA_KUBERNETES_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath).toBe(
      'metadata.namespace',
    )
    // One proxy, the ingress controller, in front.
    expect(env().get('TRUST_PROXY')?.value).toBe('1')
    const config = env().get('TESSERA_CONFIG')?.value
    const mount = container().volumeMounts?.find((m) => m.mountPath === config)
    expect(mount, 'TESSERA_CONFIG is a mounted volume').toBeDefined()
    expect(mount?.readOnly).toBe(true)
    const volume = deployment().spec.template.spec.volumes?.find((v) => v.name === mount?.name)
    expect(volume?.configMap?.name).toBe('tessera-providers')
  })

  it('takes its secrets from tessera-secrets, under the keys docs/deploy.md lists', () => {
    const references = container().env.filter((variable) => variable.valueFrom?.secretKeyRef)
    expect(
      Object.fromEntries(
        references.map(({ name, valueFrom }) => [name, valueFrom?.secretKeyRef?.key]),
      ),
    ).toEqual(SECRET_KEYS)
    for (const { valueFrom } of references) expect(valueFrom?.secretKeyRef?.name).toBe(SECRET)
    const documented = [
      ...readRepoFile('docs/deploy.md').matchAll(/--from-literal=([a-z0-9-]+)=/g),
    ].map((match) => match[1])
    expect(documented.sort()).toEqual(Object.values(SECRET_KEYS).sort())
  })

  it('has settings that `tessera start` accepts, once the secrets are filled in', () => {
    const vars: Record<string, string> = {
      JWT_SECRET: 'j'.repeat(64),
      DATABASE_URL: 'postgres://tessera:password@postgres:5432/tessera',
      KEY_ENCRYPTION_SECRET: 'k'.repeat(64),
      TESSERA_KUBERNETES_NAMESPACE: 'tessera',
    }
    for (const { name, value } of container().env) if (value !== undefined) vars[name] = value
    expect(parseSettings(vars, 'start')).toMatchObject({
      configSource: 'kubernetes',
      config: '/etc/tessera/providers',
      port: 3000,
      host: '0.0.0.0',
      trustProxy: 1,
      adminPort: 9464,
      adminHost: '0.0.0.0',
    })
  })

  it('runs as a non-root user that cannot gain privileges or write its file system', () => {
    const pod = deployment().spec.template.spec.securityContext
    expect(pod?.runAsNonRoot).toBe(true)
    expect(pod?.runAsUser).toBeGreaterThan(0)
    const { securityContext } = container()
    expect(securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    })
    expect(securityContext?.capabilities?.add).toBeUndefined()
    expect(securityContext?.runAsUser ?? pod?.runAsUser).not.toBe(0)
  })
})

describe('RBAC', () => {
  it('grants exactly get, list and watch on the Tenants of the CRD', () => {
    const role = findManifest<Role>(readManifests('rbac.yaml'), 'Role')
    const { group, names } = crd().spec
    expect(role.rules).toEqual([
      { apiGroups: [group], resources: [names.plural], verbs: ['get', 'list', 'watch'] },
    ])
    expect(`${names.plural}.${group}`).toBe('tenants.tessera.dev')
  })

  it('binds the Role to the ServiceAccount the Deployment runs as, in its own namespace', () => {
    const rbac = readManifests('rbac.yaml')
    const binding = findManifest<RoleBinding>(rbac, 'RoleBinding')
    const account = findManifest<Manifest>(rbac, 'ServiceAccount')
    const role = findManifest<Role>(rbac, 'Role')
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role.metadata.name,
    })
    // Without a namespace, a RoleBinding's ServiceAccount subject is the one of its namespace.
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name }])
    expect(deployment().spec.template.spec.serviceAccountName).toBe(account.metadata.name)
  })
})

describe('example-tenant.yaml', () => {
  const providers = () => findManifest<ConfigMap>(exampleTenant(), 'ConfigMap')
  const tenant = () => findManifest<Manifest>(exampleTenant(), 'Tenant')

  it('is a Tenant of the CRD', () => {
    const { group, versions, names } = crd().spec
    expect(tenant().apiVersion).toBe(`${group}/${versions[0]?.name}`)
    expect(tenant().kind).toBe(names.kind)
  })

  it('passes the issuer’s configuration check, with its scripts from the providers ConfigMap', () => {
    const directory = env().get('TESSERA_CONFIG')?.value ?? ''
    const scripts = Object.keys(providers().data)
    const result = parseConfig(
      // The Kubernetes source resolves provider paths against TESSERA_CONFIG, as against the
      // folder of a tenant file there.
      [{ file: join(directory, 'acme'), value: tenant() }],
      {
        env: {},
        jwtSecret: undefined,
        fileExists: (path) => dirname(path) === directory && scripts.includes(basename(path)),
      },
    )
    expect(result).toMatchObject({ ok: true })
    if (!result.ok) return
    expect(result.tenants).toHaveLength(1)
    expect(result.tenants[0]).toMatchObject({
      name: 'acme',
      hosts: ['auth.acme.example'],
      jwtAlgorithm: 'RS256',
      providers: [join(directory, 'demo-users.mjs')],
    })
  })

  it('ships the demo provider script of examples/, unchanged', () => {
    expect(providers().data['demo-users.mjs']).toBe(
      readFileSync(join(REPO, 'examples/providers/demo-users.mjs'), 'utf8'),
    )
  })
})
