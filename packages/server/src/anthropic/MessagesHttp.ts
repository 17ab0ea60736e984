/**
 * The Messages API endpoints: translation between Anthropic's wire and `Completions`. A streamed
 * answer goes out through `EventStream` in Anthropic's dialect; a whole one as a `message`.
 */
import { randomUUID } from "node:crypto"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Completions, councilTierOf, type Request } from "@huddle/domain/answers/Completions"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { InvalidRequest } from "@huddle/domain/shared/Errors"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as EventStream from "../shared/EventStream.js"
import { orgAsked } from "../shared/Headers.js"
import { reportContext } from "../shared/reportContext.js"
import { countTokens } from "./CountTokens.js"
import { message } from "./MessageResponse.js"
import type { AnthropicHeaders } from "./MessagesApi.js"
import * as MessagesDialect from "./MessagesDialect.js"
import { toRequest } from "./MessagesTranslation.js"
import type { CreateMessage } from "./MessagesWire.js"

const newId = () => `msg_${randomUUID().replace(/-/g, "")}`

/**
 * A council's calls carry its own prompts, not the request: what only Anthropic could honour is
 * refused, and so is extended thinking (its models differ in how they reason), each by its name.
 */
const councilChecked = (request: Request, payload: CreateMessage): Effect.Effect<Request, InvalidRequest> => {
  const first = request.options?.anthropic?.unportable[0]
  if (first !== undefined) return Effect.fail(new InvalidRequest({ message: first.message, field: first.param }))
  if (payload.thinking !== undefined && payload.thinking.type !== "disabled") {
    return Effect.fail(new InvalidRequest({ message: "`thinking` is not supported by a council: its models differ in how they reason", field: "thinking" }))
  }
  const { anthropic: _, reasoning_effort: __, ...options } = request.options ?? {}
  return Effect.succeed({ ...request, options })
}

export const MessagesHttp = HttpApiBuilder.group(Api, "anthropic", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const scopes = yield* RequestScopes

    /** The request's scope; the response says which context it ran in. */
    const scopeOf = (headers: AnthropicHeaders) =>
      Effect.flatMap(CurrentPrincipal, (principal) => scopes.resolve(principal, { headerOrgId: orgAsked(headers) })).pipe(
        Effect.tap(reportContext)
      )

    return handlers
      .handle("createMessage", ({ headers, payload }) =>
        Effect.gen(function*() {
          const translated = toRequest(yield* scopeOf(headers), payload, headers)
          const request = councilTierOf(payload.model) === undefined ? translated : yield* councilChecked(translated, payload)
          const events = completions.open(request)
          const id = newId()
          return payload.stream === true
            ? yield* EventStream.respond(events, MessagesDialect.dialect(id, payload.model))
            : yield* message(events, id, payload.model)
        }))
      .handle("countMessageTokens", ({ headers, payload }) => Effect.as(scopeOf(headers), countTokens(payload)))
  }))
