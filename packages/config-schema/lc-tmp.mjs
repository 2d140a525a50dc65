import { loadConfig } from './dist/index.js'
for (let i = 0; i < 2; i++) {
const t = performance.now()
const tenants = await loadConfig(process.argv[2], { env: {}, jwtSecret: 'x'.repeat(40) })
console.log(tenants.length, (performance.now() - t).toFixed(0), 'ms', (process.memoryUsage().rss / 1e6).toFixed(0), 'MB', (process.memoryUsage().heapUsed / 1e6).toFixed(0))
}
