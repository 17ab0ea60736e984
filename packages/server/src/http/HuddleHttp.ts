import { HttpApiBuilder, type HttpServerResponse } from "@effect/platform"
import { HuddleReply } from "@huddle/domain/Huddle"
import { CurrentPrincipal } from "@huddle/domain/Principal"
import { Preferences } from "@huddle/domain/Preferences"
import { Huddles } from "@huddle/domain/services/Huddles"
import { ignoreEvents } from "@huddle/domain/services/IntentPipeline"
import { RequestContext } from "@huddle/domain/services/RequestContext"
import { Effect, Schema, Struct } from "effect"
import { Api } from "../Api.js"
import { SseSettings } from "./SseSettings.js"
import * as Sse from "./Sse.js"

const encodeReply = Schema.encode(HuddleReply)

/** The settings a huddle request names; they go through the same precedence as every other source. */
const requestSettings = (payload: Pick<Preferences, "mode" | "model_tier">) => new Preferences(Struct.pick(payload, "mode", "model_tier"))

export const HuddleHttp = HttpApiBuilder.group(Api, "huddle", (handlers) =>
  Effect.gen(function*() {
    const huddles = yield* Huddles
    const requestContext = yield* RequestContext
    const sse = yield* SseSettings

    /** Runs a huddle turn as JSON or, with `?stream=true`, as server-sent events. */
    const answer = <E>(
      stream: boolean,
      run: (emit: Parameters<typeof huddles.start>[2]) => Effect.Effect<HuddleReply, E>
    ): Effect.Effect<HuddleReply | HttpServerResponse.HttpServerResponse, E> =>
      stream
        ? Sse.respond(
          run,
          (reply) => Effect.map(Effect.orDie(encodeReply(reply)), (body) => ({ status: reply.status, body })),
          sse
        )
        : run(ignoreEvents)

    return handlers
      .handle("start", ({ headers, payload, urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const context = yield* requestContext.resolve(principal, {
            orgId: payload.org_id,
            headerOrgId: headers["huddle-organization"] ?? headers["openai-organization"],
            workspaceId: payload.workspace_id
          })
          return yield* answer(urlParams.stream, (emit) =>
            huddles.start(principal, {
              input: payload.input,
              request: requestSettings(payload),
              orgId: context.orgId,
              workspaceId: context.workspaceId
            }, emit))
        }))
      .handle("message", ({ path, payload, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          answer(urlParams.stream, (emit) =>
            huddles.reply(principal, path.session_id, {
              input: payload.content,
              request: requestSettings(payload)
            }, emit))))
      .handle("sessions", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.list(p, urlParams)))
      .handle("session", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.get(p, path.session_id)))
      .handle("rename", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => huddles.rename(p, path.session_id, payload.title)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.remove(p, path.session_id)))
  }))
