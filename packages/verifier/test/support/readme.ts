import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { defaultFetch } from '../../src/internal/default-fetch.js'

// What the README tests share: the README and its blocks, the example tenants `pnpm start`
// serves, and the servers pasted from the README, run on free ports.

export const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url))
export const EXAMPLES_DIR = fileURLToPath(new URL('../../../../examples/', import.meta.url))
export const README = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8')
export const JWT_SECRET = 'readme-e2e-secret-0123456789-abcdefghij'
// `pnpm start` listens on 3000 and the README's servers on 4000; here both run on free ports.
export const START_PORT = '3000'
export const API_PORT = '4000'

export interface Block {
  lang: string
  code: string
}

/** The blocks of a `## ` section of the README, by language. */
export function sectionBlocks(markdown: string, heading: string): Block[] {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  expect(start, `section ${heading}`).toBeGreaterThan(-1)
  const rest = markdown.slice(start + 1)
  const end = rest.indexOf('\n## ', 1)
  const part = end === -1 ? rest : rest.slice(0, end)
  return [...part.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((match) => ({
    lang: match[1]!,
    code: match[2]!,
  }))
}

/** The package a bare import specifier names (`@koa/router`, `hono` for `hono/cors`). */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/** A port free right now: the kernel picks it, we release it and hand it to a child process. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The README's text with the documented ports replaced by the ones this test listens on. */
export function withPorts(text: string, issuerPort: number, apiPort?: number): string {
  const issuerReplaced = text.replaceAll(`.localhost:${START_PORT}`, `.localhost:${issuerPort}`)
  return apiPort === undefined
    ? issuerReplaced
    : issuerReplaced.replaceAll(`localhost:${API_PORT}`, `localhost:${apiPort}`)
}

/** A token of the example tenant at `host` by the password grant, as the README's curl asks. */
export async function exampleToken(
  host: string,
  client: string,
  user: string,
  scope?: string,
  extra: Record<string, string> = {},
): Promise<string> {
  // By name, as the README's curl does: the verifier's own fetch resolves *.localhost.
  const response = await defaultFetch(`http://${host}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(client).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'password',
      username: user.split(':')[0]!,
      password: user.split(':')[1]!,
      ...(scope === undefined ? {} : { scope }),
      ...extra,
    }).toString(),
  })
  const body = (await response.json()) as { access_token?: string }
  expect(response.status).toBe(200)
  return body.access_token!
}

/** Runs `node server.js` and resolves once it has printed its first line. */
export async function startServer(
  dir: string,
  port: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['server.js'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), JWT_SECRET, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.includes('listening on')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server.js exited with ${code}: ${output}`)))
  })
  // It printed before listen finished on some frameworks: wait until it answers.
  for (let i = 0; i < 50; i += 1) {
    const ok = await fetch(`http://127.0.0.1:${port}/me`).then(
      () => true,
      () => false,
    )
    if (ok) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { child, output: () => output }
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}
