import { format, resolveConfig } from 'prettier'
import { describe, expect, it } from 'vitest'
import { tenantResourceJsonSchema } from './json-schema.js'

const SNAPSHOT = '../test/__snapshots__/tenant-resource.schema.json'

type Node = Record<string, unknown>

/** Every schema node of the tree with its path, for the structural checks. */
function* nodes(node: Node, path = '#'): Generator<[string, Node]> {
  yield [path, node]
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Node>)) {
    yield* nodes(child, `${path}/properties/${key}`)
  }
  if (node.items) yield* nodes(node.items as Node, `${path}/items`)
}

describe('tenantResourceJsonSchema', () => {
  it('matches the snapshot', async () => {
    const json = JSON.stringify(tenantResourceJsonSchema(), null, 2)
    // Formatted as the repository's Prettier would, so that `prettier --check .` passes on it.
    const options = await resolveConfig(new URL(SNAPSHOT, import.meta.url))
    await expect(await format(json, { ...options, parser: 'json' })).toMatchFileSnapshot(SNAPSHOT)
  })

  it('is plain JSON', () => {
    const schema = tenantResourceJsonSchema()
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema)
    expect(JSON.stringify(schema)).not.toMatch(/"\$(ref|defs|schema)"/)
  })

  it('is a structural schema, as a Kubernetes CRD requires', () => {
    for (const [path, node] of nodes(tenantResourceJsonSchema())) {
      const context = `${path}: ${JSON.stringify(node)}`
      // A type everywhere, unless the node explicitly keeps any value.
      expect(
        node.type !== undefined || node['x-kubernetes-preserve-unknown-fields'],
        context,
      ).toBeTruthy()
      // No value alternatives, and never properties together with additionalProperties.
      expect(node.anyOf ?? node.oneOf ?? node.allOf, context).toBeUndefined()
      if (node.properties) expect(node.additionalProperties, context).toBeUndefined()
    }
  })

  it('describes the spec with its defaults', () => {
    const spec = (tenantResourceJsonSchema().properties as Record<string, Node>).spec!
    const properties = spec.properties as Record<string, Node>
    expect(spec.required).toEqual(['hosts', 'providers', 'clients'])
    expect(properties.jwt_algorithm).toMatchObject({ default: 'HS256', enum: ['HS256', 'RS256'] })
    const client = (properties.clients!.items as Node).properties as Record<string, Node>
    expect(client.grant_types).toMatchObject({ default: ['authorization_code', 'refresh_token'] })
    expect(client.client_id?.pattern).toBeTypeOf('string')
  })
})
