/**
 * Who pays for an answer, decided in one place for every entry point: the member whose request
 * it is, in the org it runs in (whose pool pays only when the settings allow credit fallback),
 * with the authority of whoever acts — the member, or the admin who approved it after review.
 */
import type { Principal } from "../identity/Principal.js"
import { authorityOf } from "../credits/Credits.js"
import type { Payer } from "../models/MeteredCall.js"
import type { EffectiveSettings } from "../settings/Policy.js"

export const payerOf = (input: {
  readonly userId: string
  readonly orgId: string | null
  readonly settings: EffectiveSettings
  /** Whose credential is checked again as the credits are taken. */
  readonly actor: Principal
}): Payer => ({
  userId: input.userId,
  orgId: input.orgId,
  creditFallback: input.settings.credit_fallback.value,
  authority: authorityOf(input.actor)
})
