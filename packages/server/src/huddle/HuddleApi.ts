import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { HuddleReply, HuddleSession, HuddleSessionWithMessages, SessionTitle } from "@huddle/domain/huddle/Huddle"
import { HuddleMode, ModelTier } from "@huddle/domain/settings/Preferences"
import { Id } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import { OrgHeaders } from "../shared/Headers.js"
import * as Idempotency from "../shared/Idempotency.js"
import { Input } from "../shared/Input.js"
import { ListParams, page } from "../shared/Lists.js"
import * as RateLimit from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

export const StreamParams = Schema.Struct({
  stream: Schema.optionalWith(Schema.BooleanFromString, { default: () => false })
})

/** What `mode` means, for the reference. */
const Mode = HuddleMode.annotations({
  description:
    "`single`: one model answers. `multi`: a council of 2–4 models proposes, critiques, agrees and ratifies; the reply's `consensus` reports agreement and dissent. `auto`: Huddle decides (two independent answers, and a council only when they disagree); `mode_reason` says why."
})

export const StartRequest = Schema.Struct({
  input: Input,
  mode: Schema.optional(Mode),
  model_tier: Schema.optional(ModelTier),
  org_id: Schema.optional(Id),
  workspace_id: Schema.optional(Id)
})

export const MessageRequest = Schema.Struct({
  content: Input,
  mode: Schema.optional(Mode),
  model_tier: Schema.optional(ModelTier)
})

export const RenameRequest = Schema.Struct({ title: SessionTitle })

const SessionPath = Schema.Struct({ session_id: Id })

const streamingNote =
  "With `?stream=true` the answer is `text/event-stream`: `stage` events as the pipeline advances, `token` events with the text as it is produced, then `metadata` (this same body) and `done`; an `error` event if it fails after streaming began. Errors before the first event are plain HTTP errors."

export class HuddleApi extends HttpApiGroup.make("huddle")
  .add(
    HttpApiEndpoint.post("start", "/huddle")
      .annotate(OpenApi.Summary, "Start a huddle")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "intent")
      .setPayload(StartRequest)
      .setUrlParams(StreamParams)
      .setHeaders(OrgHeaders)
      .addSuccess(HuddleReply)
      .annotate(OpenApi.Description, `Start a huddle: a new session and the answer to its first message. ${streamingNote}`)
  )
  .add(
    HttpApiEndpoint.post("message", "/huddle/sessions/:session_id/messages")
      .annotate(OpenApi.Summary, "Send a message to a session")
      .annotateContext(Idempotency.keyed)
      .annotate(RateLimit.Class, "intent")
      .setPath(SessionPath)
      .setPayload(MessageRequest)
      .setUrlParams(StreamParams)
      .addSuccess(HuddleReply)
      .annotate(OpenApi.Description, `Continue a session; the mode may change from message to message. ${streamingNote}`)
  )
  .add(
    HttpApiEndpoint.get("sessions", "/huddle/sessions")
      .annotate(OpenApi.Summary, "List sessions")
      .setUrlParams(ListParams)
      .addSuccess(page(HuddleSession))
      .annotate(OpenApi.Description, "The caller's sessions, newest first.")
  )
  .add(
    HttpApiEndpoint.get("session", "/huddle/sessions/:session_id")
      .annotate(OpenApi.Summary, "Get a session with its messages")
      .annotate(OpenApi.Description, "One of the caller's sessions, with its messages in order.")
      .setPath(SessionPath)
      .addSuccess(HuddleSessionWithMessages)
  )
  .add(
    HttpApiEndpoint.patch("rename", "/huddle/sessions/:session_id")
      .annotate(OpenApi.Summary, "Rename a session")
      .annotate(OpenApi.Description, "Give one of the caller's sessions a new title.")
      .setPath(SessionPath)
      .setPayload(RenameRequest)
      .addSuccess(HuddleSession)
  )
  .add(
    HttpApiEndpoint.del("delete", "/huddle/sessions/:session_id")
      .annotate(OpenApi.Summary, "Delete a session")
      .annotate(OpenApi.Description, "Delete one of the caller's sessions with its messages. Irreversible.")
      .setPath(SessionPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(Envelope.NotFound)
  .addError(Envelope.InsufficientCredits)
  .addError(Envelope.PolicyViolation)
  .addError(Envelope.UpstreamUnavailable)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimit.RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Huddle")
  .annotate(OpenApi.Description, "Huddle sessions: multi-model answers to a conversation, as JSON or streamed as server-sent events.")
{}
