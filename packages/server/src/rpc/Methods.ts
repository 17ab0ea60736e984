/**
 * The methods of `/v1/rpc`, in one table: each with the schema its params are decoded with, the
 * schema its result is encoded with (the OpenRPC document is generated from both), its rate
 * class and its handler, which calls the domain.
 */
import { Intent } from "@huddle/domain/huddle/Intent"
import { HuddleMode, ModelTier, Preferences } from "@huddle/domain/settings/Preferences"
import type { Principal } from "@huddle/domain/identity/Principal"
import { outcomeOf } from "@huddle/domain/huddle/PipelineEvent"
import { Intents } from "@huddle/domain/huddle/Intents"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { Effect, Schema, Struct } from "effect"
import { Input as HuddleInput } from "../shared/Input.js"
import { maxInputLength } from "../shared/Limits.js"
import { ById, Id, IntentPage, ListParams } from "./IntentMethods.js"
import * as JsonRpc from "./JsonRpc.js"
import * as OpenRpc from "./OpenRpc.js"

/** Who calls, and the org the request's headers ask for (`Huddle-Organization`, `OpenAI-Organization`). */
export interface Caller {
  readonly principal: Principal
  readonly headerOrgId: string | undefined
  /** The endpoint's absolute URL as the caller reached it, for `rpc.discover`'s `servers`. */
  readonly endpointUrl: string
}

const Input = HuddleInput.annotations({
  title: "input",
  description: `What to do or answer (1 to ${maxInputLength} characters)`
})

export const SubmitParams = Schema.Struct({
  input: Input,
  mode: Schema.optional(HuddleMode.annotations({
    description:
      "single: one model answers; multi: a council of the tier's models (proposals, anonymised critique, a chair's synthesis, ratification) answers with a consensus, reported in the result's consensus; auto: the service decides and the result's mode says which answered. Default: the caller's preferences (personal, then the org's defaults), else single"
  })),
  model_tier: Schema.optional(ModelTier.annotations({
    description: "The tier asked for; an enforced org policy wins (see the result's settings.model_tier.decided_by)"
  })),
  model: Schema.optional(Id.annotations({
    description: "A catalog model by name; refused with POLICY_VIOLATION when an enforced policy forbids its tier"
  })),
  org_id: Schema.optional(Id.annotations({
    description: "The org to run in (its credits, policies, memories); otherwise the Huddle-Organization or OpenAI-Organization header, otherwise a key's bound org, otherwise personal"
  })),
  workspace_id: Schema.optional(Id.annotations({ description: "One of the caller's workspaces (default: the personal one)" }))
})


const NoParams = Schema.Struct({})

export const info: OpenRpc.Info = {
  title: "Huddle JSON-RPC",
  version: "1.0.0",
  description:
    "Intents over JSON-RPC 2.0 at POST /v1/rpc: batches and notifications; the bare {method, params} shape is answered too. Domain errors carry data {error, message} as the REST envelope does."
}

export const make = Effect.gen(function*() {
  const intents = yield* Intents
  const scopes = yield* RequestScopes

  const intentMethods: ReadonlyArray<JsonRpc.Method<Caller>> = [
    JsonRpc.method({
      name: "intent.submit",
      summary: "Submit an intent",
      description:
        "Runs the pipeline in the mode asked for (single, multi or auto, as in the huddle) and answers with the intent: completed (or failed), or awaiting_review when the org's auto_execute: false policy is in force, in which case nothing is charged until it is approved. The intent's mode is the mode that answered; a council's answer (multi, or auto when it convened one) is its consensus, with the report in consensus (also on intent.get). A council's whole worst case is reserved before its first call; fewer than two participants left is UPSTREAM_UNAVAILABLE. mode multi or auto with model is refused (a model is one model, a council the tier's).",
      rateClass: "intent_submission",
      params: SubmitParams,
      result: Intent,
      resultName: "intent",
      errors: ["InvalidRequest", "InsufficientCredits", "PolicyViolation", "NotFound", "UpstreamUnavailable", "Unauthorized"],
      handler: (params, caller: Caller) =>
        Effect.gen(function*() {
          const scope = yield* scopes.resolve(caller.principal, {
            orgId: params.org_id,
            headerOrgId: caller.headerOrgId,
            workspaceId: params.workspace_id
          })
          const outcome = yield* outcomeOf(intents.submit({
            scope,
            sessionId: null,
            input: params.input,
            request: params.model_tier === undefined && params.mode === undefined
              ? undefined
              : new Preferences(Struct.pick(params, "mode", "model_tier")),
            model: params.model
          }))
          return outcome.intent
        })
    }),
    JsonRpc.method({
      name: "intent.get",
      summary: "Read an intent",
      description: "An intent the caller submitted, or one of an org the caller administers.",
      rateClass: "read",
      params: ById,
      result: Intent,
      resultName: "intent",
      errors: ["NotFound"],
      handler: (params, caller: Caller) => intents.get(caller.principal, params.id)
    }),
    JsonRpc.method({
      name: "intent.list",
      summary: "List the caller's intents, or an org's",
      description:
        "The intents the caller submitted, newest first, a page at a time, each with who submitted it. With org_id, an org's intents, every member's, for its admins: the queue of what awaits their review, with status awaiting_review.",
      rateClass: "read",
      params: ListParams,
      result: IntentPage,
      resultName: "page",
      errors: ["Forbidden", "NotFound"],
      handler: (params, caller: Caller) =>
        intents.list(caller.principal, { limit: params.limit, cursor: params.cursor, status: params.status, orgId: params.org_id })
    }),
    JsonRpc.method({
      name: "intent.approve",
      summary: "Approve an intent awaiting review",
      description:
        "Executes it (credits are reserved for its submitter) and answers with the intent after execution. The submitter or an admin of its org may approve, once.",
      // It runs the model: it counts as a submission.
      rateClass: "intent_submission",
      params: ById,
      result: Intent,
      resultName: "intent",
      errors: ["NotFound", "Conflict", "Forbidden", "InsufficientCredits", "PolicyViolation", "InvalidRequest", "UpstreamUnavailable", "Unauthorized"],
      handler: (params, caller: Caller) =>
        Effect.map(outcomeOf(intents.approve(caller.principal, params.id)), (outcome) => outcome.intent)
    }),
    JsonRpc.method({
      name: "intent.reject",
      summary: "Reject an intent awaiting review",
      description: "It will not run and nothing is charged. The submitter or an admin of its org may reject, once.",
      // A state change that runs no model: counted with the reads.
      rateClass: "read",
      params: ById,
      result: Intent,
      resultName: "intent",
      errors: ["NotFound", "Conflict"],
      handler: (params, caller: Caller) => intents.reject(caller.principal, params.id)
    })
  ]

  let discovered: ((url: string) => OpenRpc.OpenRpcDocument) | undefined
  const discover: JsonRpc.Method<Caller> = JsonRpc.method({
    name: "rpc.discover",
    summary: "Describe this endpoint",
    description: "The OpenRPC 1.2 document of every method, with its params, result and errors.",
    rateClass: "read",
    params: NoParams,
    result: OpenRpc.OpenRpcDocument,
    resultName: "openrpc",
    errors: [],
    handler: (_params, caller: Caller) =>
      Effect.sync(() => (discovered ??= OpenRpc.document([...intentMethods, discover], info))(caller.endpointUrl))
  })

  const methods: ReadonlyArray<JsonRpc.Method<Caller>> = [...intentMethods, discover]
  return methods
})
