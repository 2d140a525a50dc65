/**
 * Building in halves: the parts of a change built with few calls, and the parts that cannot be
 * built found by bisection. Both tenant sources build this way: the files source its changed
 * files, the kubernetes source its batches of resources.
 *
 * @module
 */

/** An item that could not be built, with what its own build threw (or why it was not tried). */
export interface Refusal<T> {
  item: T
  error: unknown
}

/** What a build answers: built whole, or nothing built and why. */
export type Built = { ok: true } | { ok: false; error: unknown }

export interface HalvesOptions<T> {
  /**
   * Builds `part` whole, or builds nothing of it and answers why. What it throws is not a
   * refusal of the part but a failure of the whole: it ends the bisection.
   */
  build(part: readonly T[]): Promise<Built>
  /**
   * Why `part` must not be built at all, if so; undefined to go on. Every item of such a part is
   * refused with that reason, without a build and without a split.
   */
  refuse?(part: readonly T[]): Error | undefined
}

/**
 * Builds `items` with few calls of `build`: all at once, and when that throws, in halves down to
 * the items that cannot be built; one such item among n costs about 2·log2(n) calls. What a call
 * builds stays built. Answers the items refused, in the order they were found; rejects with what
 * `build` throws.
 */
export async function buildInHalves<T>(
  items: readonly T[],
  options: HalvesOptions<T>,
): Promise<Refusal<T>[]> {
  const refusals: Refusal<T>[] = []
  /** Answers whether every item of `part` was built; `failing`: it is known not to be. */
  const attempt = async (part: readonly T[], failing: boolean): Promise<boolean> => {
    if (part.length === 0) return true
    const reason = options.refuse?.(part)
    if (reason !== undefined) {
      for (const item of part) refusals.push({ item, error: reason })
      return false
    }
    // Trying again a part known to hold an item that fails would only cost a build; an item
    // alone is always tried, so that its refusal says its own problem.
    if (!failing || part.length === 1) {
      const built = await options.build(part)
      if (built.ok) return true
      const [only] = part
      if (part.length === 1 && only !== undefined) {
        refusals.push({ item: only, error: built.error })
        return false
      }
    }
    const half = Math.ceil(part.length / 2)
    const first = await attempt(part.slice(0, half), false)
    // The first half built whole: what failed is in the second.
    const second = await attempt(part.slice(half), first)
    return first && second
  }
  await attempt(items, false)
  return refusals
}
