import { OAuthError } from '@tessera/grants'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { GuardedFetchError } from './fetch-guard.js'
import type { GuardedResponse } from './fetch-guard.js'
import { createClientDocuments, metadataDocumentClients } from './metadata-documents.js'

const ID = 'https://app.example.com/client.json'
const document = {
  client_id: ID,
  client_name: 'App',
  redirect_uris: ['https://app.example.com/cb'],
}

function setup(answer: (url: string) => Promise<GuardedResponse>) {
  let now = 1_000_000
  const fetched: string[] = []
  const documents = createClientDocuments({
    allowPrivateAddresses: false,
    now: () => now,
    logger: pino({ level: 'silent' }),
    fetch: async (url) => {
      fetched.push(url)
      await new Promise((resolve) => setTimeout(resolve, 10))
      return answer(url)
    },
  })
  return {
    documents,
    fetched,
    advance: (ms: number) => {
      now += ms
    },
  }
}

const ok =
  (headers: GuardedResponse['headers'] = {}) =>
  () =>
    Promise.resolve({ headers, body: Buffer.from(JSON.stringify(document)) })

describe('client ID metadata documents', () => {
  it('fetches a document once for concurrent lookups, and again once its max-age is over', async () => {
    const { documents, fetched, advance } = setup(ok({ 'cache-control': 'max-age=600' }))
    const clients = metadataDocumentClients(documents, ['read', 'write'])
    const found = await Promise.all([clients.find(ID), clients.find(ID), clients.find(ID)])
    expect(found.map((client) => client?.name)).toEqual(['App', 'App', 'App'])
    expect(found[0]).toMatchObject({
      scopes: ['read', 'write'],
      dynamic: { kind: 'metadata-document', host: 'app.example.com' },
    })
    expect(fetched).toEqual([ID])
    advance(599_000)
    await clients.find(ID)
    expect(fetched).toHaveLength(1)
    advance(2_000)
    await clients.find(ID)
    expect(fetched).toHaveLength(2)
  })

  it('keeps a document at least 5 minutes, whatever its headers say', async () => {
    const { documents, fetched, advance } = setup(ok({ 'cache-control': 'no-store' }))
    const clients = metadataDocumentClients(documents, ['read'])
    await clients.find(ID)
    advance(299_000)
    await clients.find(ID)
    expect(fetched).toHaveLength(1)
    advance(2_000)
    await clients.find(ID)
    expect(fetched).toHaveLength(2)
  })

  it('answers invalid_client naming the problem, and remembers a failure for 30 s', async () => {
    const { documents, fetched, advance } = setup(() =>
      Promise.reject(new GuardedFetchError('status 404, not 200')),
    )
    const clients = metadataDocumentClients(documents, ['read'])
    const failure = clients.find(ID)
    await expect(failure).rejects.toBeInstanceOf(OAuthError)
    await expect(failure).rejects.toMatchObject({
      code: 'invalid_client',
      description: "The client's metadata document cannot be used: status 404, not 200.",
    })
    await expect(clients.find(ID)).rejects.toMatchObject({ code: 'invalid_client' })
    advance(29_000)
    await expect(clients.find(ID)).rejects.toMatchObject({ code: 'invalid_client' })
    expect(fetched).toHaveLength(1)
    advance(2_000)
    await expect(clients.find(ID)).rejects.toMatchObject({ code: 'invalid_client' })
    expect(fetched).toHaveLength(2)
  })

  it('refuses a document whose client_id is another URL', async () => {
    const { documents } = setup(() =>
      Promise.resolve({
        headers: {},
        body: Buffer.from(JSON.stringify({ ...document, client_id: 'https://evil.example/c' })),
      }),
    )
    await expect(metadataDocumentClients(documents, ['read']).find(ID)).rejects.toMatchObject({
      description:
        "The client's metadata document cannot be used: its client_id differs from the URL it was fetched from.",
    })
  })

  it('fetches nothing for a client_id that is no metadata document URL', async () => {
    const { documents, fetched } = setup(ok())
    const clients = metadataDocumentClients(documents, ['read'])
    for (const id of ['https://app.example.com/', 'http://127.0.0.1/client', 'not a url']) {
      expect(await clients.find(id)).toBeUndefined()
    }
    expect(fetched).toEqual([])
  })

  it('gives each tenant its own scopes of one cached document', async () => {
    const { documents, fetched } = setup(() =>
      Promise.resolve({
        headers: {},
        body: Buffer.from(JSON.stringify({ ...document, scope: 'read admin' })),
      }),
    )
    expect((await metadataDocumentClients(documents, ['read', 'write']).find(ID))?.scopes).toEqual([
      'read',
    ])
    expect((await metadataDocumentClients(documents, ['admin']).find(ID))?.scopes).toEqual([
      'admin',
    ])
    expect(fetched).toHaveLength(1)
  })
})
