// The loopback fetch is shared with the verifier's and demo-api's tests.
export { loopbackFetch } from '@tessera/test-support'
