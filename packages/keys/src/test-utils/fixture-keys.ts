import type { GenerateKey } from '../internal/key-ops.js'

// Four 2048-bit RSA private JWKs made once for tests: generating a key takes from a tenth of a
// second to several seconds of CPU, and tests that stand in for a machine under load must not
// wait for it. Test material only; never used outside this package's tests.
const FIXTURE_JWKS = [
  {
    kty: 'RSA',
    n: 'uLE1KZCQq6PqXyMtMwSAQpLfd-_AZKaism9V-EVyrz2x50u7N5Ba1WQOWNN1Tyqz_qxtGkvoqgtZGiVAZzTc7git99Zi46raxUyfuGIbLdY9bQ_69uOTq7O22M5OfdV07-yY8dxZxNvFHSr8PZGnuKBVGJIyE_MpGITF5VvPAxivYB7n8r4g-zQV_YBaaMqmhq1R1nVlnGHLW_BaurxEUubqm4Jm3Fk8J6-0Yo4e5-Wm7FnQmp72jEtxxK_9yrTut6W_EsgqJoATKkbtiwN4Y6suyPeaebu62zC9aXYyER0-VVh7lL25K5ZQbpXRTE9ZimIxGbh-qlMiOP1Ccn_WaQ',
    e: 'AQAB',
    d: 'E7AAJMAeS82bTCzpwoh2S6JwY86QyanhqfeoSGDOytNexXMTL-cZZ6nUxa800A2TRlCHCMiSsp2nD9xssxO1gUI3mTWnMPGjhGiYlgUPNKGjxp5veCXmNeVgVlgXkd5RKsoju5RrlUqABo3weXevU0T0DTx4Thwbg1uT5NEWjhPC8y7y0Mte0liB7q2MtwLkpSUBUjFtzjm5Qc3eyGmkTr2_aVMXjl0LAv5KhinCrmLOIsTh6EyEmn8jgCAx8s6t0RJhhLzlD0jWZxnWnjE-LUJnsNiJVCz_epNzDavsKskheTcC7jJAeoLFLGZjjtPhUi37_JjwEw6vdse4Dzj7AQ',
    p: '8RaQzptL4Fb5FGe94k2rtX1FTVnexnQhsicqdsLi5qbUYFpnj3ORjlRs0By4lK9BkmV_CjxJ-uMS9e8PW1EVNFSt-6g5qHBiWLph6FwUliReDN1pMnIbM7sGswYWz-VR0QWy10lrsFNVap4z_yUSa9XonYZnK0vZLHVBVclFMFE',
    q: 'xB2ojnev1GdHPD8TxPdL9C_SovfCqzB53peGnsXG3t4NxUlLeS3VVW_VRLR9ooxIcwMwf6yW6RTka7zd5uQEZ6bmX0MJ3DefUMGHu6xDX3sCyD3HWIokwS-9qLm-vSusfUaKl7esFSEhd9ZC5PGvG6e_fQ3lo4xBJD_qlD1PFpk',
    dp: 'Trg2ii-tA9CCPgZtuvHvijAgK9SXaCdNRVWCiQqzeeqpV9jNDcsHkPjCGuX14x6ig4G-jIIJCfGRJFptojyEdvTbZluUkAo6IoyhIXTHiArR5tN44O7fMPH1iwkG89UF9QEuVxtzHTzonAqSIdJiBHHxJVZYY4u9msWikrdIbzE',
    dq: 'akz1Jzvit4u_hf1ett2gctxVHPaUsvvUov2Y_4iOUhEkf7JJ0YYxY1z5yYLXsnq9bnHlIN8o8W_cnDVERjmD1bcWmb4Zox8XIMu1ydkGr8Nab7Vkzy4Z3AkHkWQU6i65ETJiPvhUsyNBI9akbbo-wwu69IrK1UpZqM9oVC-jJck',
    qi: 'IGl07mbqQFK3dQpYQr5t_1mJZcX3ohbYWvp42WlNNHG5SPK3A-u3TpxHx4_r0F7pcFdsxyl4v2p1Mjagdmq2AAr9KbEp_kSC0iJfUSfg_53UxOIKa6x-bDVLfQagNflsud4jGe9D3n-WajsbgPEExAB-5pFEHpc40NYmOnzghmw',
  },
  {
    kty: 'RSA',
    n: 'qzOHLojlu__3IeZ1BytdPHvsu0OaVd1AsEstGH9alNdY_RIyMkgOhGp9vftZuvuHqwdgZy1ChJbc6MqXVgvpMidE_CZWBOYwmHSEWAwSy3kcqy5tVunVjy5ViyaeAVuticJa-x8Q5rQ1aFBf8S4VRn-IZXVn0uMqNep90aQMU032Bc3ZKGp_SRmee0idlIGeH1Zllr---AHB6__3L-XRiz0N44Cx4rvsjORFnJc_APvRe086l33Lc4nuOVKq20YlGp8Z5N0mdeJ1zIy36lfCPI99xD-9ANmnzK-gWvN63ldV-yh8UazmY1kCJF_Gm2nNc8P3V8pqaP32v6K4y1CGCw',
    e: 'AQAB',
    d: 'M0t5EWRLEQ0cSrf2EHPZt6mZwHH86AUmwKuFk3V0-mubahftmkskrmAJ1MZemDuM5p2LMN7Ks1dQUR-CQHHJKRHDBZmm5Ejj_onKrWbQqs5a3J9Ie2YMap4DW3HynY2ObVwiTmN8eOM9rUeHt4eLMFg90chflzwhBY6ArDNuzfZr7Ovj4KFC7nrHPy9NIxuu2mIYBtlT7nUuFg-gc-X2K-1UaudTSlVvKmua5witkVNMJks-Mj0LREqqh049emBXBV1I3NFKc74iYvYra0iBruIHpB5jhii0dLoEayhHMawTuIyVriCk82SPglheTHmUvZTX53Le8g_9JXv8VgbWgQ',
    p: '5TCP2Umk532UwJd0UZWxOOhjrXvTHFYQzkxFgSCIx1Y7b-W9OZDfXq37CUAKz77HJgeAbDF_ZshgyrbXFE2twMmyHK0ryERhCyPv9ShMEl-IOJ8LqUuRY5Bnj0TEodXrYCSuZtfNBmRqisJ94mO253G0shwqO8S4ZpK5hnIVzZs',
    q: 'vzpp82ZYPfII8B3WiPp5l_se6QI9e3itQUirTh63SHLPPJLceRSTrqynxXqyPCBZhRoeiS1epBCDbJjYPzH_a5hDAZIXYZHROqrLnJ44XbyLEfWDPnaYmB_uqxFS9NrnsSY1eo7O4upqzdwfGyv3gsd5vVQZgIDts8Ypk7yi6FE',
    dp: 'fE0SN27RmRtrCekalQTy0UJ4jSaTINMs2jZTm-zhQftq0Q1wyz_fZaJGfIXXV0TJDb8Tz5oo1r3mgQsZK1HV4rGBgDwLetpbJ4eeJQBuAaj-YHciA_eQKseu4u0RGBTFS6eZTv3LnKPphMhnLdmW4X-x2MedwDy5Jih9poVJffE',
    dq: 'LxsknmDHu_qzWPMAth19doLVynBS1OeVRk-wYz4NyDr_8dv7k5gOCSle6rae0VDmvHMCsqgKeD_ZIBdGrcqTMN4BI5HpUI-rCtin75zKJc0cNQBVpD1yuYakNF_AH7ENAgZ3hglHzX4RcUSYJQlfn0ekJY9h-NXJuE9ITqxZNQE',
    qi: 'uTjtWDR3Gsj5K7svypezKYC9Nsr1OjQ9s68Jyh3bFry_3xu2FGGitZHpWbnpt-Fj4V_88yhUBWfdoDPaSVcdDNN8Wn4-QVHpfsstI6yARY9_uT98y_3N8Je_j7PDllv4bL3Vu3SQ4NzkDq7HIfLf3fVboBrLXaXvU0x7EsLEpkU',
  },
  {
    kty: 'RSA',
    n: 'xvEE1v5Uu4PWv2a0XjixLQdrOedkuo3q3eiB0dIbI3MOWcqV9l3LGU9QYq8yAW9cLdNTVYWzM_c4-ek4qjRhsdmhILkkbJyXhLErGavDrHExgwpmqIR1Z-1Muie6Xsa557JW_-IrvDwbJC2askNzMc_bb9NJn7_wI57sB02oYLMDA5RD4VDdyUATVu1OAw5JOjX-JiG3DU56bpH9L1K5ERw5DT2caQ55GlP-U4SMyr3J48GLrbdvxk7LanDB5qUT6gX3-hB78oe5pTA29B2guHA_t_j5rlTB11lT-TmDKE4qU8FJuEaPDYbRcOPe8I_fqt-oqhRYXPczYEO1CdlLcQ',
    e: 'AQAB',
    d: 'L7F1XxNu_dtf_tfg8tu1gh2Os72JFP5T6apFgSdVMTzymk0qgXs_5wvwMhBdNSHc3_GTP2QDr7gblTI3zvoq16fcbItmM5Gg84ND2W4nxW4HmCpErS7ANM-bft9qWzFaPTUwjTzMDl78hMJYHVd1ROJXcaoeMumhaPC_FgskjDXByvoxHRaaLTaRwr0l3SXCkmZ9pHtAzl_hUFoHna3ul-EfPJm_zPBZlBiA2Nhr4XrbdRHw2QONF4tIsn8XS1QnPBaRElr-Yoz26ZMll_CWAT1CUGqH91pQmrhENGZHSjyPX-LDbDxkRDFdq6Mo2siHELUzOV2hUFRCxafEx2waCQ',
    p: '8srWydx77VOnDGKwMBuIskHOb3-ewjZbvO9NAVAM1cQuOmGewSdBTQWFVgiMjS6mfQPXANx7uLkDIBniy2FhBwT-SNvARt6zq5fSaYcIz75KX-thQMZgzmKPOw7yyzm63OVA1idnaSguYEnfZEi-9XbrFIj5T28U7CQZHw8vc8U',
    q: '0cOBqzSNhO5z96QZZBffJR953NQacXwwT7jYnUZtodXJMYDfvW-y2Wpjm6rpD8AWmcZBTt1ydeIipUgJTWJVML7GgZpbX3DLiKmS92OtRz2I6DQ1GyKW-JzVY-FUyxGZ8tKd46i6k5nDuPvK9k9iJu8qsxg4Pynu-C_hUmXDt70',
    dp: 'Av9AAYPoP7i9oiiBtkZQvKqVSskPg6Q6I63sjGyZi_X9ABl-ZTH_21yLFdHLMl72DSsD923BVTlrcXUAWLReB0Enhmy4Befv3dlk7oqNMEtQDbkRHUSVo1aSIA-CLcILrXhjAYHBBApL8EJZMJq5SLxsEHfUZAeiAXw8lyaP1mU',
    dq: 'Zr7Rs--A5jz6drFdcoay2XcqdL072pyO-W28RIUrzBpwexv5-8tLmm0fLy-vCvT23QmcEaosl4tVlwnK7KmeusqnZvIZkY0pVN5iy2R6iqucdMilvo3Zzxra9xp3MySC-MqrZcjO4t9tXB2RU8aceB-sFZ9mZaH_mHezcW3BSS0',
    qi: 'XeJL9_uV15Bj5tgLjkIGNz6c9LhNQVhNpC-S8XoDAJ9Hlp1Z3FVuFO9RTp2ZWaect22TeLr8Qrzum_aKDRNnSvLOAWfe4imEWUGwI4yX-Fi7BqThOJFfSFE2yAS7bngvDtv50MjA8I-9ydUOF4LGOY4Xv5rZzm0q9c4T44fuosc',
  },
  {
    kty: 'RSA',
    n: 'pRZXZ721RcyDrKTW4h0AsK_eUH8YhRA2d20tycD6jzrICDk6aN2lNtozgiqIjxQTl-DR81Rwu08M4dYQ2UcFJ-v6TCePmoEDgiisZmsPFgkPOfeklU-SVFvJ_qWnLVm5nnOERaLHWdYooClicvIa1tJz0bib3VoFdysZwCAvvXSrhHO66lBKlxmPKKZFSgxd5F6wTu1M6TJHK3zt632xNjcsaYHY3AZgberROhMHlX9t7lxm3w-5_vOuvNMxDPTOChmrtssmTjRpq7BGfZqmnkLz4_Zi7lskA1lqClTtDjl51Kf1AYFu0ymDaUrvzzUPTxxSxw4MZjsmPDg8Y6AbWQ',
    e: 'AQAB',
    d: 'DAeX_cBXmSW5PZzIZ3MnavicdFStQnr8i7t6CpmEQz4ht-RbAtZjNN9LFr6HM2001_cjDWkXNYr3McNceHIXUyympqMmW3hFu20VJ6RrAGx6E9EIHko4AUDWtAvkUKbDuCMLndsUoub7EGAGThZ2yWB4s0JRd0cunpur1XHIUMo1fcjn8vrHr-wwxbyZEdPi5KTbe-PMJSADD4JmXenG68oyz_t9Pa94Kym0kYbZg6pk7rqy1zBqBVIQRcstbQxVasfa6C4XKCg_Lxn4J88qAs1l07Xs0Pg84RIwXcbBukNeVjnUA6zLmODdYkSwn-aMipX_PSqtylgKffnGDpp5lQ',
    p: '3-ZxBlnJ4GvcwbY4_vz8bxVrblv464SwR--aft6MYL7xoMexNB2nAlmQS_JustEdnDuGNMI9DJ72J9JYmqaNmNJ3tf2h3eHBGrqDmFi26hO2oVqwTrtuJwJRogOOSmCBzZhBqVjBQ-vhZ6Pbl5C8Uub_6dQqJPbKetqK7_1Eo10',
    q: 'vMFbF_TL1aI1j0pM_w2-E_k-zvW2sQK41b8GWhwMHyrIaiHNE2CJjegnO-vFIsPp2kBE5t6BdjlgRxeb3pmFO8u4-TywL8z8kzjR1wtA1T3yEGzd7g4RlkPTBeKcsERCpmRs7ggZYnqmr8wPbUwi5eGu0mRY6jVMzpBnFhFatC0',
    dp: 'O6g0-VI3Pfq_aUXaTeauhBKa-166JlbGeYRYD_HQSX7W9tX-WzqDY1bl4baI1FBvqU8a5TfT-Gbqg5XCUgKKu-toRi98T5h1UV_c7FzG7_usr7VwQKokIXS2t4pnAV5Rd6xX4n1pkWVqO6knO20vII-4JF-JkyvGq5FLb8J15Wk',
    dq: 'P4EKBcBNR73AKUpFJ1ZXSd8EW5rdcSZKS1duaqifB2lcbiCbH1bOUJj3gjhrZavmJJCU3dukUMMy-hgeT8D0y05aGDhrylk77MgkCSZ3FIc3xoDqFapUDmsZNxSrxL3icpq870R4TeKX6_NKiWohH5hTOeOa6okuIx0AIbOLAa0',
    qi: 'f3k1a49RhFwGAGF8Pwwh0ve0Q-lE3tT60wXBjfMca7HgHnFhbEV5U6zqV4QmdTI7RhNToHkHdaLKPvNgNY7Amlx-rzfl_WSMReWl_LLxLsfWi6CoQaPgRGvLM3yXoRLnbXNM9CTqgY08fXzohBnL_cFwHDbgTW7-UYsHj_lorNQ',
  },
] as const

let handedOut = 0

/**
 * A GenerateKey that hands out the fixture keys in turn, so consecutive keys of a test differ
 * (four in a row at least) and cost nothing to make.
 */
export const fixtureKey: GenerateKey = (tenant, kid, now) => {
  const jwk = FIXTURE_JWKS[handedOut++ % FIXTURE_JWKS.length]!
  const { kty, n, e } = jwk
  return Promise.resolve({
    tenant,
    kid,
    alg: 'RS256',
    publicJwk: JSON.stringify({ kty, n, e }),
    privateKey: JSON.stringify(jwk),
    createdAt: now,
    state: 'active',
  })
}
