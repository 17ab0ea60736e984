/**
 * Request headers shared by endpoint groups: the organization a call acts in, by the OpenAI
 * name or Huddle's own. Kept apart from any one group so that groups do not import each other.
 */
import { personalContext } from "@huddle/domain/request/RequestScope"
import { Id, Line } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"

export const OrgHeaders = Schema.Struct({
  // An OpenAI org id or anything else an SDK sends is left unread (below), whatever its length.
  "openai-organization": Schema.optional(Line.pipe(Schema.maxLength(1024))),
  "huddle-organization": Schema.optional(Id)
})

/** Huddle's organization ids (`org_…`); OpenAI's are `org-…`. */
const isHuddleOrgId = (value: string) => value.startsWith("org_")

/**
 * The org a request's headers ask for. `Huddle-Organization` always asks (a non-member gets
 * 404); `personal` asks for the context of no organization, as responses name it. `OpenAI-Organization` asks only when it holds a Huddle org id: the OpenAI SDKs send
 * `OPENAI_ORG_ID` there by default, an OpenAI org that means nothing here, so such a value is
 * not ours to read and the request runs in its own context (a bound key's org, else personal).
 * Responses say which context ran in `Huddle-Organization` (see `contextHeader`), so that no one
 * is charged from a pool they did not expect without being told.
 */
export const orgAsked = (headers: typeof OrgHeaders.Type): string | undefined => {
  const openai = headers["openai-organization"]
  return headers["huddle-organization"] ?? (openai !== undefined && isHuddleOrgId(openai) ? openai : undefined)
}

/** The response header naming the context a request ran in: an org id, or `personal`. */
export const contextHeader = "huddle-organization"

export const contextOf = (orgId: string | null): string => orgId ?? personalContext

/**
 * The response header that says what an answer was charged, in credits: on a whole answer, and
 * on a 502 for a call that failed after it produced output (`0` when it produced none).
 */
export const creditsChargedHeader = "huddle-credits-charged"

/**
 * The response header of an answer whose output cap was lowered to what the payer's credits
 * cover, rather than refused: `Huddle-Max-Tokens: 812; lowered-from=16384`. Absent when nothing
 * was lowered.
 */
export const maxTokensHeader = "huddle-max-tokens"

export const maxTokensValue = (lowered: { readonly from: number; readonly to: number }): string =>
  `${lowered.to}; lowered-from=${lowered.from}`

/** The lowering as the body's usage carries it (`usage.max_tokens_lowered`). */
export const loweredUsage = (lowered: { readonly from: number; readonly to: number } | undefined) =>
  lowered === undefined ? {} : { max_tokens_lowered: { from: lowered.from, to: lowered.to } }

/**
 * The response header of an answer the offline model gave in place of the configured models,
 * because they failed (`HUDDLE_OFFLINE_FALLBACK=on`, decision 0034): each model tried and why,
 * `Huddle-Offline-Fallback: gpt-4o-mini; reason="connection"`. Absent on any other answer.
 */
export const offlineFallbackHeader = "huddle-offline-fallback"

export const offlineFallbackValue = (failed: ReadonlyArray<{ readonly model: string; readonly reason: string }>): string =>
  failed.map(({ model, reason }) => `${model}; reason="${reason.replace(/["\\]/g, "")}"`).join(", ")
