import { spawn } from 'node:child_process'

/**
 * Starts one Node process per worker with `argsFor(worker)`, waits until every one has printed
 * `ready`, releases them together (`go` on stdin), and returns what each printed after `ready`
 * (one JSON array). The store's cross-process race tests use it: the processes are real
 * replicas, so only the database can keep them from both winning.
 */
export async function raceProcesses<T>(
  replicas: number,
  argsFor: (worker: number) => string[],
): Promise<T[][]> {
  const children = Array.from({ length: replicas }, (_, worker) => {
    const child = spawn(process.execPath, argsFor(worker), {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    let out = ''
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8')
        if (out.startsWith('ready\n')) resolve()
      })
    })
    const done = new Promise<T[]>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (status) => {
        if (status !== 0) reject(new Error(`replica ${worker} exited with ${String(status)}`))
        else resolve(JSON.parse(out.slice('ready\n'.length)) as T[])
      })
    })
    return { child, ready, done }
  })
  await Promise.all(children.map(({ ready }) => ready))
  for (const { child } of children) child.stdin.write('go\n')
  return Promise.all(children.map(({ done }) => done))
}
