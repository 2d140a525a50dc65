// A provider script (docs/providers.md): its default export checks a username and password and
// answers { sub, claims? } or null. Demo users only; the hashes were made with
// `pnpm tessera hash-password`.
//
//   alice / wonderland-42      bob / builder-42

const USERS = new Map([
  [
    'alice',
    {
      sub: 'c3a1b6f0-5d2e-4c8f-9a71-0e2d4b6f8a10',
      hash: '$scrypt$ln=14,r=8,p=1$C0lJHmVGy5VwaXuLIVNt6A$hBGp2lfifP1epHtOYXZb2PwQ2K9RGEH+vM6TSOgzX+w',
      // Standard claims (OpenID Connect Core §5.1): the profile and email scopes release them.
      claims: {
        name: 'Alice Liddell',
        given_name: 'Alice',
        family_name: 'Liddell',
        preferred_username: 'alice',
        email: 'alice@example.test',
        email_verified: true,
      },
    },
  ],
  [
    'bob',
    {
      sub: '5f9e2d71-8b4a-4e3c-a6d0-2c7b9e1f4a53',
      hash: '$scrypt$ln=14,r=8,p=1$QiDHQUwKQaUHhbSPDWinQw$0FDehJyBeqTNAGpMQm6E24lkDGz5Sf0K9sYoLV7QsfQ',
      claims: { name: 'Bob Builder' },
    },
  ],
])

export default {
  /**
   * @param {{ username: string, password: string }} credentials
   * @param {{ verifyPassword(password: string, hash: string | undefined): Promise<boolean> }} tools
   */
  async authenticate({ username, password }, { verifyPassword }) {
    const user = USERS.get(username.toLowerCase())
    // verifyPassword(password, undefined) does the same work, so unknown names are not faster.
    const ok = await verifyPassword(password, user?.hash)
    return ok && user ? { sub: user.sub, claims: user.claims } : null
  },
}
