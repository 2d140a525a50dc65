import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The built CLI's entry point: tests run what `pnpm build` made. */
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

/**
 * Runs the CLI to completion (e.g. `keys rotate`) with exactly `vars` plus PATH, in `cwd` (default:
 * the test's).
 */
export function runCli(
  args: string[],
  vars: Record<string, string>,
  { cwd }: { cwd?: string } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...vars },
      ...(cwd === undefined ? {} : { cwd }),
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (status) => resolve({ status, stdout, stderr }))
  })
}
