import { pino } from 'pino'
import { Registry } from 'prom-client'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { createAdminApp } from './admin-app.js'

describe('createAdminApp', () => {
  const server = createAdminApp({
    registry: new Registry(),
    logger: pino({ level: 'silent' }),
    ready: () => true,
    ping: () => Promise.resolve(),
  }).callback()

  it('serves its three paths with GET and HEAD on any host', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      expect((await request(server).get(path).set('Host', 'anything')).status, path).toBe(200)
      expect((await request(server).head(path)).status, path).toBe(200)
    }
  })

  it('matches paths exactly: another case or a trailing slash is 404', async () => {
    for (const path of ['/Metrics', '/metrics/', '/HEALTHZ', '/readyz/', '//metrics', '/']) {
      const res = await request(server).get(path)
      expect(res.status, path).toBe(404)
      expect(res.body).toEqual({ error: 'invalid_request', error_description: 'not found' })
    }
  })

  it('answers every other method on its paths with 405 and Allow: GET, HEAD', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PROPFIND']) {
      const res = await request(server)
        .options('/metrics')
        .use((req) => {
          req.method = method
        })
      expect(res.status, method).toBe(405)
      expect(res.headers.allow).toBe('GET, HEAD')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
    }
    expect((await request(server).post('/token')).status).toBe(404)
  })
})
