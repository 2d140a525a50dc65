import { execFileSync } from 'node:child_process'
import { tenantResourceJsonSchema } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import type { CustomResourceDefinition } from './manifests.js'
import { findManifest, KUBERNETES, readManifests, readRepoFile } from './manifests.js'

const GENERATOR = `${KUBERNETES}generate-crd.mjs`

function crd(): CustomResourceDefinition {
  return findManifest<CustomResourceDefinition>(
    readManifests('crd.yaml'),
    'CustomResourceDefinition',
  )
}

describe('deploy/kubernetes/crd.yaml', () => {
  it('is what generate-crd.mjs produces from the current schema', () => {
    const generated = execFileSync(process.execPath, [GENERATOR, '--stdout'], {
      encoding: 'utf8',
    })
    const committed = readRepoFile('deploy/kubernetes/crd.yaml')
    // toBe shows the difference; the message says how to fix it.
    expect(
      committed,
      'deploy/kubernetes/crd.yaml is stale: run `pnpm generate:crd` and commit the result',
    ).toBe(generated)
  })

  it('says it is generated and how to regenerate it', () => {
    const header = readRepoFile('deploy/kubernetes/crd.yaml').split('\n', 1)[0]
    expect(header).toMatch(/^# Generated — do not edit; run `pnpm generate:crd`/)
  })

  it('defines tenants.tessera.dev: kind Tenant, version v1, namespaced', () => {
    const { metadata, spec } = crd()
    expect(metadata.name).toBe('tenants.tessera.dev')
    expect(spec.group).toBe('tessera.dev')
    expect(spec.scope).toBe('Namespaced')
    expect(spec.names).toMatchObject({
      kind: 'Tenant',
      listKind: 'TenantList',
      plural: 'tenants',
      singular: 'tenant',
    })
    expect(spec.versions.map(({ name, served, storage }) => ({ name, served, storage }))).toEqual([
      { name: 'v1', served: true, storage: true },
    ])
  })

  it('validates with the schema of @tessera/config-schema, unchanged', () => {
    const [version] = crd().spec.versions
    expect(version?.schema.openAPIV3Schema).toEqual(tenantResourceJsonSchema())
  })

  it('prints hosts and algorithm from fields the schema has', () => {
    const [version] = crd().spec.versions
    const columns = version?.additionalPrinterColumns ?? []
    expect(columns.map((column) => column.name)).toEqual(['Hosts', 'Algorithm', 'Age'])
    for (const column of columns) {
      if (column.jsonPath.startsWith('.metadata.')) continue
      // `.spec.hosts` must name a property of the schema: a typo would print an empty column.
      let node = version?.schema.openAPIV3Schema
      for (const key of column.jsonPath.slice(1).split('.')) {
        node = (node?.properties as Record<string, Record<string, unknown>> | undefined)?.[key]
      }
      expect(node, column.jsonPath).toBeDefined()
    }
  })
})
