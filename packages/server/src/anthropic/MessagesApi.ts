/**
 * Anthropic's Messages API (DESIGN §8): `POST /v1/messages` and `POST /v1/messages/count_tokens`,
 * on Anthropic's wire, for `@anthropic-ai/sdk` and Claude Code (`ANTHROPIC_BASE_URL`). Errors on
 * these paths are Anthropic's envelope `{"type":"error","error":{"type","message"}}`, rendered at
 * the edge for this group's `Dialect` (see `AnthropicErrors.ts`).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Line } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { Dialect } from "../shared/ErrorTable.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import * as RateLimit from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"
import { CountTokens, CreateMessage, Message, TokenCount } from "./MessagesWire.js"

/** The headers Anthropic's clients send; forwarded unchanged to an Anthropic upstream. */
export const AnthropicHeaders = Schema.Struct({
  "anthropic-version": Schema.optional(Line.pipe(Schema.maxLength(64))),
  "anthropic-beta": Schema.optional(Line.pipe(Schema.maxLength(4096))),
  ...OrgHeaders.fields
})
export type AnthropicHeaders = typeof AnthropicHeaders.Type

/** Claude Code adds `?beta=true`; it changes nothing here (the betas are in `anthropic-beta`). */
const BetaParam = Schema.Struct({ beta: Schema.optional(Schema.Literal("true", "false")) })

const anthropicErrors =
  "Credentials: `x-api-key: hk_…` or `Authorization: Bearer hk_…`. Errors use Anthropic's envelope `{\"type\":\"error\",\"error\":{\"type\",\"message\"}}` (400 `invalid_request_error`, 401 `authentication_error`, 402 `billing_error`, 403 `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429 `rate_limit_error` with `retry-after`, 5xx `api_error`/`overloaded_error`), with a `request-id` header."

export class MessagesApi extends HttpApiGroup.make("anthropic")
  .add(
    HttpApiEndpoint.post("createMessage", "/messages")
      .annotate(OpenApi.Summary, "Create a message (Anthropic's Messages API)")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "chat")
      .setPayload(CreateMessage)
      .setUrlParams(BetaParam)
      .setHeaders(AnthropicHeaders)
      .addSuccess(Message)
      .annotate(
        OpenApi.Description,
        "Anthropic's Messages API, for `@anthropic-ai/sdk` and Claude Code. `model` is a tier, a catalog model id, an alias of the catalog (by default `claude-*haiku*`, `claude-*sonnet*`, `claude-*opus*` → economy, standard, premium) or a council (`council`, `council-<tier>`: the consensus is the text and the report is in the top-level `consensus` field, streamed on `message_delta`). To an Anthropic upstream the request goes as sent (`anthropic-version`, `anthropic-beta`, `cache_control` unchanged); to others it is translated (docs/anthropic.md), and what they cannot honour is refused with a 400 naming it. The organization's memories follow the client's system prompt, so that its cache prefix stays intact. The worst case is reserved first and settled to the usage (`Huddle-Credits-Charged`); a `max_tokens` the credits cannot cover is lowered (header `Huddle-Max-Tokens`, `usage.max_tokens_lowered`). `response.model` names the model that answered. With `stream: true` the answer is Anthropic's event stream (`message_start` … `message_stop`, `ping`, `error`). " +
          anthropicErrors
      )
  )
  .add(
    HttpApiEndpoint.post("countMessageTokens", "/messages/count_tokens")
      .annotate(OpenApi.Summary, "Count a message's tokens")
      // A count changes nothing and charges nothing: a retry simply counts again.
      .annotate(Idempotency.Keyed, false)
      .annotate(RateLimit.Class, "read")
      .setPayload(CountTokens)
      .setUrlParams(BetaParam)
      .setHeaders(AnthropicHeaders)
      .addSuccess(TokenCount)
      .annotate(
        OpenApi.Description,
        `The input tokens of a request as Huddle estimates them to reserve credits (system, messages and tools, translated): deterministic, free. ${anthropicErrors}`
      )
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.InsufficientCredits)
  .addError(Envelope.PolicyViolation)
  .addError(Envelope.UpstreamUnavailable)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimit.RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Anthropic-compatible")
  .annotate(OpenApi.Description, "Anthropic's Messages API, in Anthropic's wire format and error envelope.")
  .annotate(Dialect, "anthropic")
{}
