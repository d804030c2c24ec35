/**
 * What the provider metadata says about OpenID Connect (Discovery 1.0 §3): the fields the RFC
 * 8414 document and the OpenID configuration both carry (`Metadata.document` builds both).
 */
import { SigningAlgorithm } from "../model/Config.js"
import * as Claims from "./Claims.js"

/** The `prompt` values the authorize endpoint understands (OpenID Connect Core 1.0 §3.1.2.1). */
const promptValues = ["none", "login", "consent", "select_account"] as const

/**
 * The OpenID Connect fields of the provider metadata, given the absolute URLs of the userinfo,
 * JWKS and end session (RP-Initiated Logout 1.0 §2.1) endpoints. Subjects are pairwise: each
 * application has its own open_id of a user. Back-channel logout is offered to the applications
 * that register a URI for it. `scopes_supported` names the OpenID scopes, then each of `catalogued`
 * (the scope catalogue's names) that is not one of them.
 */
export const fields = (
  urls: {
    readonly userinfo: string
    readonly jwks: string
    readonly endSession: string
  },
  catalogued: ReadonlyArray<string> = []
): Record<string, unknown> => ({
  userinfo_endpoint: urls.userinfo,
  jwks_uri: urls.jwks,
  end_session_endpoint: urls.endSession,
  scopes_supported: [
    ...Claims.scopesSupported,
    ...catalogued.filter((name) => !(Claims.scopesSupported as ReadonlyArray<string>).includes(name))
  ],
  claims_supported: [...Claims.claimsSupported],
  subject_types_supported: ["pairwise"],
  id_token_signing_alg_values_supported: [...SigningAlgorithm.literals],
  prompt_values_supported: [...promptValues],
  // OpenID Connect Back-Channel Logout 1.0 §2.1: logout tokens, and they always carry sid
  backchannel_logout_supported: true,
  backchannel_logout_session_supported: true
})
