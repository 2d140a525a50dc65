import { describe, expect, it } from 'vitest'
import { afterWatch, backoffMs, createPause, DEFAULT_RETRY, HEALTHY_WATCH_MS } from './backoff.js'

const RETRY = { initialMs: 500, maxMs: 30_000 }
const middle = () => 0.5

describe('backoffMs', () => {
  it('starts at initialMs and doubles per failure in a row, up to maxMs', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((failures) => backoffMs(failures, RETRY, middle))
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000])
    // A huge count neither overflows nor passes the cap.
    expect(backoffMs(10_000, RETRY, middle)).toBe(30_000)
  })

  it('treats zero failures as the first', () => {
    expect(backoffMs(0, RETRY, middle)).toBe(500)
  })

  it('spreads each wait by ±20 % so that replicas do not retry in step', () => {
    expect(backoffMs(1, RETRY, () => 0)).toBe(400)
    expect(backoffMs(1, RETRY, () => 0.999_999)).toBe(600)
    expect(backoffMs(7, RETRY, () => 0)).toBe(24_000)
    expect(backoffMs(7, RETRY, () => 0.999_999)).toBe(36_000)
    for (let i = 0; i < 200; i++) {
      const ms = backoffMs(3, RETRY)
      expect(ms).toBeGreaterThanOrEqual(1_600)
      expect(ms).toBeLessThanOrEqual(2_400)
    }
  })

  it('defaults to a cluster-friendly 0.5 s to 30 s', () => {
    expect(DEFAULT_RETRY).toEqual({ initialMs: 500, maxMs: 30_000 })
  })
})

describe('afterWatch', () => {
  it('resumes at once after a healthy watch that ended cleanly (the server-side timeout)', () => {
    expect(afterWatch({ events: 3, durationMs: 10 }, 4)).toEqual({ failures: 0, wait: false })
    expect(afterWatch({ events: 0, durationMs: HEALTHY_WATCH_MS }, 4)).toEqual({
      failures: 0,
      wait: false,
    })
  })

  it('waits after a healthy watch that failed, from the first step again', () => {
    expect(afterWatch({ events: 2, durationMs: 10, error: 'HTTP 500: boom' }, 6)).toEqual({
      failures: 0,
      wait: true,
    })
  })

  it('counts a watch that ended at once without events as one more failure, and waits', () => {
    expect(afterWatch({ events: 0, durationMs: HEALTHY_WATCH_MS - 1 }, 0)).toEqual({
      failures: 1,
      wait: true,
    })
    expect(afterWatch({ events: 0, durationMs: 3, error: 'ECONNREFUSED' }, 2)).toEqual({
      failures: 3,
      wait: true,
    })
  })
})

describe('createPause', () => {
  it('waits the given time', async () => {
    const pause = createPause()
    const started = performance.now()
    await pause.wait(60)
    expect(performance.now() - started).toBeGreaterThanOrEqual(55)
  })

  it('ends the wait under way early on wake, and wake without a wait does nothing', async () => {
    const pause = createPause()
    pause.wake()
    const started = performance.now()
    const waiting = pause.wait(60_000)
    setTimeout(() => pause.wake(), 20)
    await waiting
    expect(performance.now() - started).toBeLessThan(5_000)
    // The wait that was woken is over: a second wake must not end the next wait.
    pause.wake()
    const next = pause.wait(50)
    let settled = false
    void next.then(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(settled).toBe(false)
    await next
  })
})
