#!/usr/bin/env node
// Writes crd.yaml next to this script: the CustomResourceDefinition of the `Tenant` resource,
// whose schema is generated from @tessera/config-schema (tenantResourceJsonSchema), the same zod
// schema the issuer checks a Tenant against. Run it as `pnpm generate:crd` (which builds
// config-schema first); `--stdout` prints the manifest instead of writing it.
import { existsSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const configSchema = new URL('../../packages/config-schema/', import.meta.url)
const built = new URL('dist/index.js', configSchema)
if (!existsSync(built)) {
  process.stderr.write(
    'generate-crd: packages/config-schema is not built; run `pnpm generate:crd` ' +
      '(or `pnpm --filter @tessera/config-schema build` first)\n',
  )
  process.exit(1)
}
const { tenantResourceJsonSchema } = await import(built.href)
// yaml is a dependency of config-schema and the private root has none: pnpm does not hoist it,
// so it is resolved from there (the same copy config-schema loads tenant YAML with).
const YAML = createRequire(new URL('package.json', configSchema))('yaml')

const HEADER = `# Generated — do not edit; run \`pnpm generate:crd\` to regenerate it.
# The Tenant CustomResourceDefinition: its schema is tenantResourceJsonSchema() of
# @tessera/config-schema, so the API server refuses what the issuer would refuse by shape.
# The rules across fields and tenants (unique hosts, redirect URIs for authorization_code, openid
# for post_logout_redirect_uris, provider scripts that exist) are the issuer's: it refuses, and
# logs, a Tenant that breaks them.
`

/** The CRD as a plain object; its validation schema is the whole resource (apiVersion, kind, metadata, spec). */
export function tenantCrd() {
  const schema = tenantResourceJsonSchema()
  // A CRD schema describes the whole object: a `type: object` root with the spec inside it.
  if (schema.type !== 'object' || typeof schema.properties?.spec !== 'object') {
    throw new Error('tenantResourceJsonSchema() is not the schema of a whole Tenant resource')
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: 'tenants.tessera.dev',
      labels: { 'app.kubernetes.io/name': 'tessera', 'app.kubernetes.io/part-of': 'tessera' },
    },
    spec: {
      group: 'tessera.dev',
      scope: 'Namespaced',
      names: {
        kind: 'Tenant',
        listKind: 'TenantList',
        plural: 'tenants',
        singular: 'tenant',
        categories: ['tessera'],
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          additionalPrinterColumns: [
            {
              name: 'Hosts',
              type: 'string',
              jsonPath: '.spec.hosts',
              description: 'Host names the tenant is served at',
            },
            {
              name: 'Algorithm',
              type: 'string',
              jsonPath: '.spec.jwt_algorithm',
              description: 'Access-token signing algorithm',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  }
}

/** crd.yaml as it must be committed. */
export function renderTenantCrd() {
  return HEADER + YAML.stringify(tenantCrd(), { lineWidth: 0, aliasDuplicateObjects: false })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderTenantCrd()
  if (process.argv.includes('--stdout')) {
    process.stdout.write(text)
  } else {
    const target = new URL('crd.yaml', import.meta.url)
    writeFileSync(target, text)
    process.stdout.write(`wrote ${fileURLToPath(target)}\n`)
  }
}
