/**
 * Where the `kubernetes` source finds the API server and its credentials.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ConfigError } from '@tessera/config-schema'

/** Where a pod finds its service-account token: the sign of running in a cluster. */
const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token'

/**
 * The API server configuration: KUBECONFIG when set (one file or several, joined with `:`),
 * else the pod's service account, else ~/.kube/config (`KubeConfig.loadFromDefault`).
 *
 * @throws ConfigError when none is found (client-node would quietly fall back to
 *   http://localhost:8080) or the file cannot be read; the message never repeats file contents,
 *   which hold credentials.
 */
export function loadKubeConfig(env: Record<string, string | undefined>): KubeConfig {
  const kubeConfig = new KubeConfig()
  const files = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '')
  const problem = (path: string, message: string) =>
    new ConfigError([{ file: 'environment', line: 0, path, message }])
  if (files.length > 0) {
    files.forEach((file, index) => {
      const loading = index === 0 ? kubeConfig : new KubeConfig()
      try {
        loading.loadFromFile(file)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        throw problem(
          'KUBECONFIG',
          code === 'ENOENT'
            ? `no such file: ${file}`
            : code === 'EACCES'
              ? `permission denied: ${file}`
              : `not a valid kubeconfig file: ${file}`,
        )
      }
      if (index === 0) return
      try {
        // As with kubectl, the first file's current-context wins.
        kubeConfig.mergeConfig(loading, true)
      } catch {
        throw problem('KUBECONFIG', `${file} repeats a cluster, user or context name`)
      }
    })
  } else if (
    existsSync(SERVICE_ACCOUNT_TOKEN_FILE) ||
    existsSync(join(homedir(), '.kube', 'config'))
  ) {
    try {
      kubeConfig.loadFromDefault()
    } catch {
      throw problem('KUBECONFIG', 'the in-cluster or ~/.kube/config configuration cannot be read')
    }
  } else {
    throw problem(
      'TESSERA_CONFIG_SOURCE',
      'kubernetes needs the API server: run in a pod with a service account, or set KUBECONFIG',
    )
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw problem('KUBECONFIG', 'names no current context with a cluster')
  }
  return kubeConfig
}
