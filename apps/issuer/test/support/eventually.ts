/**
 * Runs `check` until it stops throwing (an `expect` that holds), every `intervalMs`, and throws
 * its last error once `timeoutMs` has passed. For changes that arrive asynchronously (a watch
 * event, a reconnect), instead of a fixed sleep.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() >= deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
