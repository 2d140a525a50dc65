/**
 * The URL of the worker module `name` (`./x.js`) beside the module whose `import.meta.url` is
 * `base`. Built, the worker is the `.js` file beside it in `dist/`. Run from the sources by
 * vitest, `base` is a `src/**.ts` file, and a worker thread runs in plain Node, outside vitest's
 * transform, where TypeScript does not load: the worker is then the built one, at the same
 * place under `dist/` (`tsc -b` mirrors `src/` there, and turbo builds a package before its
 * tests).
 */
export function workerUrl(name: string, base: string): URL {
  const url = new URL(name, base)
  if (!base.endsWith('.ts')) return url
  const at = url.pathname.lastIndexOf('/src/')
  return new URL(
    `${url.pathname.slice(0, at)}/dist/${url.pathname.slice(at + '/src/'.length)}`,
    url,
  )
}
