import { setImmediate as nextTurn } from 'node:timers/promises'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { collectGarbage } from './start-garbage.js'

describe('collectGarbage', () => {
  it('collects an object nothing holds any more, and leaves no gc function to other contexts', async () => {
    // Made in a function of its own, so that no stack slot of this one still holds it.
    const make = () => new WeakRef({ payload: 'x'.repeat(1000) })
    const ref = make()
    // A WeakRef holds its target until the job that made it ends.
    await nextTurn()
    collectGarbage()
    expect(ref.deref()).toBeUndefined()
    expect(runInNewContext('typeof gc')).toBe('undefined')
    // Twice: the function is kept, not looked up again.
    const again = make()
    await nextTurn()
    collectGarbage()
    expect(again.deref()).toBeUndefined()
  })
})
