/**
 * Runs a synchronous call and returns its result or its throw as a promise. The ports are async;
 * a caller must never see them throw synchronously just because a driver happens to be sync.
 */
export function settle<T>(fn: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(fn()))
}
