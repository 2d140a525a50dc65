import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time (seconds) that a process has run so far, all its threads together, from
 * /proc/PID/task/TID/schedstat (nanoseconds on a CPU); undefined where /proc has no such files.
 * The benchmarks divide it by the requests served: CPU time per request hardly moves when other
 * work slows the machine, where req/s does.
 */
export function cpuSeconds(pid: number): number | undefined {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread ended between the listing and the read
      }
    }
    return ns / 1e9
  } catch {
    return undefined
  }
}

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
