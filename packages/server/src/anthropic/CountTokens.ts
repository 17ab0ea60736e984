/**
 * `POST /v1/messages/count_tokens`: the input tokens of a request as Huddle estimates them when it
 * reserves credits (`Quote.estimateInput`) for the request's translation, system, messages and
 * tools included. Deterministic and free; the organization's memories, added when the request
 * runs, are not counted (they are not the caller's).
 */
import { estimateInput } from "@huddle/domain/models/MeteredCall"
import type { CountTokens } from "./MessagesWire.js"
import { translate } from "./MessagesTranslation.js"

export const countTokens = (payload: CountTokens): { readonly input_tokens: number } => {
  const { messages, options } = translate(payload)
  return { input_tokens: estimateInput(messages, options) }
}
