import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from './manifests.js'

interface PackageJson {
  name: string
  license?: string
  repository?: unknown
  homepage?: unknown
  bugs?: unknown
  types?: string
  typings?: string
  exports?: unknown
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

const readJson = (path: string): PackageJson =>
  JSON.parse(readFileSync(path, 'utf8')) as PackageJson

/** The workspace's packages: every folder of apps/ and packages/ with a package.json. */
const workspace = ['apps', 'packages'].flatMap((group) =>
  readdirSync(join(REPO, group))
    .map((name) => join(REPO, group, name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, json: readJson(join(dir, 'package.json')) })),
)

/** The source files a package ships or runs: src/, its tests left out. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|mjs|js)$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : []
  })
}

/** The packages a source text imports, by name (`pkg`, `@scope/pkg`), subpaths folded in. */
function importedPackages(text: string): Set<string> {
  const names = new Set<string>()
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)) {
    const parts = match[1]!.split('/')
    names.add(parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!)
  }
  return names
}

/** Whether a package declares its own type definitions (so an `@types/` stub is redundant). */
function shipsTypes(json: PackageJson): boolean {
  return (
    json.types !== undefined ||
    json.typings !== undefined ||
    JSON.stringify(json.exports ?? null).includes('"types"')
  )
}

describe('package.json dependencies', () => {
  it('lists as runtime dependencies only packages that some source file imports', () => {
    const unused: string[] = []
    for (const { dir, json } of workspace) {
      const imported = new Set(
        sourceFiles(join(dir, 'src')).flatMap((file) => [
          ...importedPackages(readFileSync(file, 'utf8')),
        ]),
      )
      for (const dependency of Object.keys(json.dependencies ?? {})) {
        if (!imported.has(dependency)) unused.push(`${json.name}: ${dependency}`)
      }
    }
    expect(unused).toEqual([])
  })

  it('has no @types/ stub for a package that ships its own types', () => {
    const stubs: string[] = []
    for (const { dir, json } of workspace) {
      for (const dependency of Object.keys({ ...json.dependencies, ...json.devDependencies })) {
        if (!dependency.startsWith('@types/')) continue
        // @types/koa__router describes @koa/router.
        const typed = dependency.slice('@types/'.length).replace(/^(.+)__(.+)$/, '@$1/$2')
        const manifest = join(dir, 'node_modules', typed, 'package.json')
        if (existsSync(manifest) && shipsTypes(readJson(manifest))) {
          stubs.push(`${json.name}: ${dependency}`)
        }
      }
    }
    expect(stubs).toEqual([])
  })

  it('routes the issuer with @koa/router, as the demo API does', () => {
    const issuer = workspace.find(({ json }) => json.name === '@tessera/issuer')!
    expect(Object.keys(issuer.json.dependencies ?? {})).toContain('@koa/router')
    const router = readFileSync(join(issuer.dir, 'src/http/router.ts'), 'utf8')
    expect(importedPackages(router)).toContain('@koa/router')
  })
})

describe('licensing', () => {
  it('ships an MIT LICENSE, named by the root and every package, and packed with the verifier', () => {
    expect(readFileSync(join(REPO, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/)
    expect(readJson(join(REPO, 'package.json')).license).toBe('MIT')
    for (const { dir, json } of workspace) expect([dir, json.license]).toEqual([dir, 'MIT'])
    expect(readFileSync(join(REPO, 'packages/verifier/LICENSE'), 'utf8')).toBe(
      readFileSync(join(REPO, 'LICENSE'), 'utf8'),
    )
  })
})

describe('where the project lives', () => {
  const GITHUB = 'https://github.com/tessera-dev/tessera'

  it('names the repository, its folder, a homepage and the issue tracker in every package.json', () => {
    const root = readJson(join(REPO, 'package.json'))
    expect([root.repository, root.homepage, root.bugs]).toEqual([
      { type: 'git', url: `git+${GITHUB}.git` },
      `${GITHUB}/tree/main#readme`,
      `${GITHUB}/issues`,
    ])
    expect(workspace.length).toBeGreaterThanOrEqual(8)
    for (const { dir, json } of workspace) {
      const path = relative(REPO, dir)
      expect([json.name, json.repository, json.homepage, json.bugs]).toEqual([
        json.name,
        { type: 'git', url: `git+${GITHUB}.git`, directory: path },
        `${GITHUB}/tree/main/${path}#readme`,
        `${GITHUB}/issues`,
      ])
    }
  })

  it('points each directory at a folder of this repository with a package.json', () => {
    for (const { json } of workspace) {
      const { directory } = json.repository as { directory: string }
      expect(existsSync(join(REPO, directory, 'package.json')), directory).toBe(true)
      expect(readJson(join(REPO, directory, 'package.json')).name).toBe(json.name)
    }
  })
})
