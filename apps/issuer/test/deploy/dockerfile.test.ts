import { describe, expect, it } from 'vitest'
import type { Deployment } from './manifests.js'
import { findManifest, readManifests, readRepoFile } from './manifests.js'

interface Instruction {
  keyword: string
  args: string
}

/** The instructions of a Dockerfile: comments dropped, continuation lines joined. */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = []
  let pending = ''
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue
    pending += line.replace(/\\\s*$/, ' ')
    if (/\\\s*$/.test(line)) continue
    const match = /^\s*(\S+)\s*(.*)$/s.exec(pending)
    if (match) instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim() })
    pending = ''
  }
  return instructions
}

const instructions = () => parseDockerfile(readRepoFile('deploy/Dockerfile'))

/** The instructions of the last stage: what the image runs with. */
function runtimeStage(): Instruction[] {
  const all = instructions()
  const last = all.map((instruction) => instruction.keyword).lastIndexOf('FROM')
  return all.slice(last)
}

const runAsUser = () =>
  findManifest<Deployment>(readManifests('deployment.yaml'), 'Deployment').spec.template.spec
    .securityContext?.runAsUser

describe('deploy/Dockerfile', () => {
  it('builds in one stage and runs in another', () => {
    const stages = instructions().filter((instruction) => instruction.keyword === 'FROM')
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage.args).toMatch(/^node:20-bookworm-slim\b/)
    const named = stages.map((stage) => /\bAS\s+(\S+)$/i.exec(stage.args)?.[1])
    // Every COPY --from names an earlier stage.
    for (const copy of instructions().filter((instruction) => instruction.keyword === 'COPY')) {
      const from = /--from=(\S+)/.exec(copy.args)?.[1]
      if (from !== undefined) expect(named).toContain(from)
    }
  })

  it('cuts the issuer out of the workspace with pnpm deploy, after a frozen install and a build', () => {
    const runs = instructions()
      .filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.args)
    const index = (pattern: RegExp) => runs.findIndex((run) => pattern.test(run))
    const install = index(/pnpm install --frozen-lockfile/)
    const build = index(/pnpm .*\bbuild\b/)
    // pnpm 10 refuses to deploy a workspace without inject-workspace-packages unless --legacy.
    const deploy = index(/pnpm --filter @tessera\/issuer --prod deploy --legacy /)
    expect(install).toBeGreaterThanOrEqual(0)
    expect(build).toBeGreaterThan(install)
    expect(deploy).toBeGreaterThan(build)
  })

  it('runs as a non-root user whose uid is the Deployment’s runAsUser', () => {
    const users = runtimeStage().filter((instruction) => instruction.keyword === 'USER')
    expect(users.length).toBeGreaterThan(0)
    const user = users.at(-1)!.args
    // Numeric, so that Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
    expect(user).toMatch(/^\d+(:\d+)?$/)
    const uid = Number(user.split(':')[0])
    expect(uid).toBeGreaterThan(0)
    expect(uid).toBe(runAsUser())
  })

  it('exposes the container port and starts the tessera CLI with `start`', () => {
    const stage = runtimeStage()
    const last = (keyword: string) =>
      stage.filter((instruction) => instruction.keyword === keyword).at(-1)?.args
    expect(last('EXPOSE')).toBe('3000')
    const entrypoint = JSON.parse(last('ENTRYPOINT') ?? 'null') as string[]
    const command = JSON.parse(last('CMD') ?? '[]') as string[]
    expect(entrypoint).toEqual(['node', '/app/dist/cli/main.js'])
    expect(command).toEqual(['start'])
    expect(last('WORKDIR')).toBe('/app')
  })
})

describe('.dockerignore', () => {
  it('keeps local installs, build output and git out of the build context', () => {
    const patterns = readRepoFile('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
    for (const pattern of ['.git', '**/node_modules', '**/dist', '.env']) {
      expect(patterns).toContain(pattern)
    }
  })
})
