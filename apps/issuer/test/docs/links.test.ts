import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../deploy/manifests.js'

/** Folders never searched: dependencies, git's own, build caches and outputs of tools. */
const SKIPPED = new Set(['node_modules', '.git', '.turbo', 'test-results', 'coverage', 'data'])

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return []
    const path = join(dir, name)
    const stats = statSync(path)
    return stats.isDirectory() ? walk(path) : stats.isFile() ? [path] : []
  })
}

const FILES = walk(REPO)
const MARKDOWN = FILES.filter(
  (file) => file.endsWith('.md') && !/\/(dist|\.changeset)\//.test(file),
)

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown file's headings, with GitHub's -1, -2 suffixes for repeats. */
function anchors(file: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  for (const match of withoutCode(readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    found.add(count === 0 ? base : `${base}-${count}`)
  }
  return found
}

/** The text with fenced code blocks blanked out: a `# comment` there is not a heading. */
function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** Relative links of a Markdown text: `[text](target)`, outside code blocks and spans. */
function relativeLinks(text: string): string[] {
  const prose = withoutCode(text).replace(/`[^`\n]*`/g, '')
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

/** What is wrong with one link of `file`, or undefined when it leads somewhere real. */
function brokenLink(file: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined]
  const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
  if (!resolved.startsWith(REPO)) return 'leads out of the repository'
  if (!existsSync(resolved)) return 'no such file'
  if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
    return `no heading #${anchor}`
  }
  return undefined
}

describe('documentation links', () => {
  it('finds the pages it checks', () => {
    const names = MARKDOWN.map((file) => relative(REPO, file))
    for (const page of ['README.md', 'docs/README.md', 'packages/verifier/README.md']) {
      expect(names).toContain(page)
    }
    expect(names.filter((name) => name.startsWith('docs/')).length).toBeGreaterThan(10)
  })

  it('leads every relative link of README.md, docs/ and the package READMEs to a file and heading', () => {
    const broken: string[] = []
    let checked = 0
    for (const file of MARKDOWN) {
      for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
        checked += 1
        const problem = brokenLink(file, target)
        if (problem) broken.push(`${relative(REPO, file)}: ${target}: ${problem}`)
      }
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(50)
  })

  it('lists every page of docs/ in the docs/ index', () => {
    const index = readFileSync(join(REPO, 'docs/README.md'), 'utf8')
    const pages = readdirSync(join(REPO, 'docs')).filter(
      (name) => name.endsWith('.md') && name !== 'README.md',
    )
    const missing = pages.filter((page) => !index.includes(`](${page})`))
    expect(missing).toEqual([])
  })

  it('names only pages of docs/ that exist in source comments and messages', () => {
    const missing: string[] = []
    for (const file of FILES.filter((path) => /\.(ts|mjs|js)$/.test(path))) {
      if (file.includes('/dist/')) continue
      for (const match of readFileSync(file, 'utf8').matchAll(/\bdocs\/([\w-]+\.md)\b/g)) {
        if (!existsSync(join(REPO, 'docs', match[1]!))) {
          missing.push(`${relative(REPO, file)}: docs/${match[1]!}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it('tells a broken link, a missing heading and a link out of the repository apart', () => {
    const readme = join(REPO, 'README.md')
    expect(brokenLink(readme, 'docs/configuration.md#clients')).toBeUndefined()
    expect(brokenLink(readme, ['docs', 'nothing.md'].join('/'))).toBe('no such file')
    expect(brokenLink(readme, 'docs/configuration.md#no-such-heading')).toBe(
      'no heading #no-such-heading',
    )
    expect(brokenLink(readme, '../elsewhere/x.md')).toBe('leads out of the repository')
    expect(relativeLinks('[a](https://x.test) [b](guide/x.md) `[c](y.md)`')).toEqual(['guide/x.md'])
  })
})

describe('no reference outside the repository', () => {
  // Built from parts, so that this file does not name what it looks for.
  const OUTSIDE = [
    ['..', 'shared'].join('/'),
    ['DESIGN', 'md'].join('.'),
    ['DESIGN', '§'].join(' '),
    ['STYLE', '§'].join(' '),
  ]
  const STYLE_GUIDE = ['STYLE', 'md'].join('.')

  it('has no source, doc, manifest or build output that points at the outside contract', () => {
    const found: string[] = []
    let searched = 0
    for (const file of FILES) {
      const bytes = readFileSync(file)
      // Binary files (images, databases) carry no references a reader would follow.
      if (bytes.length > 5_000_000 || bytes.includes(0)) continue
      searched += 1
      const text = bytes.toString('utf8')
      for (const needle of [...OUTSIDE, STYLE_GUIDE]) {
        if (text.includes(needle)) found.push(`${relative(REPO, file)}: ${needle}`)
      }
    }
    expect(found).toEqual([])
    // The walk reached the sources, the docs and any built output.
    expect(searched).toBeGreaterThan(200)
  })
})
