import { describe, expect, it } from 'vitest'
import { crashesInARow, HEALTHY_UPTIME_MS, RESTART_MAX_MS, restartDelayMs } from './supervisor.js'

describe('restarting a crashed worker', () => {
  it('waits 100 ms, doubling per crash in a row, up to 30 s', () => {
    expect([1, 2, 3, 4, 5].map(restartDelayMs)).toEqual([100, 200, 400, 800, 1600])
    expect(restartDelayMs(9)).toBe(25_600)
    expect(restartDelayMs(10)).toBe(RESTART_MAX_MS)
    expect(restartDelayMs(1000)).toBe(RESTART_MAX_MS)
  })

  it('counts a crash in a row unless the worker stayed up a minute', () => {
    expect(crashesInARow(0, 50)).toBe(1)
    expect(crashesInARow(3, 50)).toBe(4)
    expect(crashesInARow(3, HEALTHY_UPTIME_MS - 1)).toBe(4)
    expect(crashesInARow(7, HEALTHY_UPTIME_MS)).toBe(1)
  })

  it('keeps a worker that crashes at once from restarting more than a few times a minute', () => {
    let crashes = 0
    let elapsed = 0
    let restarts = 0
    while (elapsed < 60_000) {
      crashes = crashesInARow(crashes, 10)
      elapsed += restartDelayMs(crashes) + 10
      restarts++
    }
    expect(restarts).toBeLessThanOrEqual(12)
  })
})
