import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

/** A `tessera` CLI process serving on loopback, as an operator would run one replica. */
export interface IssuerCli {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** The admin listener's `http://<ADMIN_HOST>:<port>`, or `off`. */
  admin: string
  child: ChildProcess
  /** Every line the process wrote to stdout and stderr so far. */
  logs: string[]
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>
  /** SIGKILL, then waits for the exit: a replica that dies without finishing anything. */
  kill(): Promise<void>
}

/**
 * Runs `node dist/cli/main.js <command> --port 0` with exactly `vars` (plus PATH) as its
 * environment and resolves once it logs `tessera issuer listening`.
 */
export async function startIssuerCli(
  vars: Record<string, string>,
  command: 'dev' | 'start' = 'dev',
): Promise<IssuerCli> {
  const child = spawn(process.execPath, [CLI, command, '--port', '0', '--host', '127.0.0.1'], {
    // ADMIN_PORT 0: processes started side by side must not race for the default admin port.
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ADMIN_PORT: '0', ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const logs: string[] = []
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let buffered = ''
    stream?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8')
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      logs.push(...lines)
    })
  }
  collect(child.stdout)
  collect(child.stderr)
  const signal = async (name: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name)
    await exited
  }
  const { url, admin } = await new Promise<{ url: string; admin: string }>((resolve, reject) => {
    const timer = setInterval(() => {
      for (const line of logs) {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string; admin?: string }
          if (entry.msg === 'tessera issuer listening' && typeof entry.url === 'string') {
            clearInterval(timer)
            resolve({ url: entry.url, admin: entry.admin ?? 'off' })
            return
          }
        } catch {
          // not a JSON line
        }
      }
    }, 20)
    void exited.then(() => {
      clearInterval(timer)
      reject(new Error(`the issuer exited with ${child.exitCode}:\n${logs.join('\n')}`))
    })
  })
  return {
    url,
    admin,
    child,
    logs,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  }
}

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
