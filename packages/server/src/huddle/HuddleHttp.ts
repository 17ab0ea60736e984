import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { HuddleReply } from "@huddle/domain/huddle/Huddle"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { type HuddleEvent, Huddles, replyOf } from "@huddle/domain/huddle/Huddles"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { Effect, type Scope, Stream, Struct } from "effect"
import { Api } from "../Api.js"
import * as EventStream from "../shared/EventStream.js"
import { maxTokensHeader, maxTokensValue, offlineFallbackHeader, offlineFallbackValue, orgAsked } from "../shared/Headers.js"
import { reportContext } from "../shared/reportContext.js"
import * as HuddleDialect from "./HuddleDialect.js"

/** The settings a huddle request names; they go through the same precedence as every other source. */
const requestSettings = (payload: Pick<Preferences, "mode" | "model_tier">) => new Preferences(Struct.pick(payload, "mode", "model_tier"))

export const HuddleHttp = HttpApiBuilder.group(Api, "huddle", (handlers) =>
  Effect.gen(function*() {
    const huddles = yield* Huddles
    const scopes = yield* RequestScopes
    const dialect = HuddleDialect.dialect

    /** A huddle turn as JSON or, with `?stream=true`, as server-sent events. */
    const answer = <E>(
      stream: boolean,
      events: Stream.Stream<HuddleEvent, E>
    ): Effect.Effect<HuddleReply | HttpServerResponse.HttpServerResponse, E, Scope.Scope> =>
      stream ? EventStream.respond(Stream.toPull(events), dialect) : Effect.tap(replyOf(events), replyHeaders)

    /**
     * `Huddle-Max-Tokens` on a reply whose output cap the member's credits lowered;
     * `Huddle-Offline-Fallback` on one the offline model gave in place of failed configured models.
     */
    const replyHeaders = (reply: HuddleReply) => {
      const { max_tokens_lowered: lowered, offline_fallback: fallback } = reply
      return lowered === undefined && fallback === undefined ? Effect.void : HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeaders(response, {
          ...(lowered === undefined ? {} : { [maxTokensHeader]: maxTokensValue(lowered) }),
          ...(fallback === undefined ? {} : { [offlineFallbackHeader]: offlineFallbackValue(fallback) })
        }))
      )
    }

    return handlers
      .handle("start", ({ headers, payload, urlParams }) =>
        Effect.gen(function*() {
          const scope = yield* scopes.resolve(yield* CurrentPrincipal, {
            orgId: payload.org_id,
            headerOrgId: orgAsked(headers),
            workspaceId: payload.workspace_id
          })
          yield* reportContext(scope)
          return yield* answer(urlParams.stream, huddles.start(scope, { input: payload.input, request: requestSettings(payload) }))
        }))
      .handle("message", ({ path, payload, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          answer(
            urlParams.stream,
            huddles.reply(principal, path.session_id, { input: payload.content, request: requestSettings(payload) })
          )))
      .handle("sessions", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.list(p, urlParams)))
      .handle("session", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.get(p, path.session_id)))
      .handle("rename", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => huddles.rename(p, path.session_id, payload.title)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => huddles.remove(p, path.session_id)))
  }))
