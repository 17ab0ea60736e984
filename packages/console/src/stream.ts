/**
 * A huddle answer as it is made: the streaming variant (`?stream=true`) of the contract's
 * `huddle.start` and `huddle.message`, read as server-sent events. The typed client cannot do it:
 * it decodes a whole JSON body with the endpoint's success schema, and this answer is a
 * `text/event-stream`. So this one module sends the contract's request (the endpoint's own path,
 * the body encoded with its payload schema, the contract's `stream` parameter) through
 * @effect/platform's HttpClient, parses the stream with @effect/experimental's SSE parser and
 * decodes every event with the contract's `HuddleStreamEvent`. A refusal before the first event
 * is a plain HTTP answer, read with the contract's envelope (docs/decisions/0023-web-console.md).
 */
import * as Sse from "@effect/experimental/Sse"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Api, Envelope, EventStreams, MessageRequest, RateLimit, StartRequest, StreamParams } from "@huddle/server/contract"
import { Effect, Either, Option, Schema, Stream } from "effect"
import type { Problem } from "./api.js"

export type HuddleEvent = typeof EventStreams.HuddleStreamEvent.Type
export type Reply = Extract<HuddleEvent, { readonly event: "metadata" }>["data"]

/** A new session's first message, or the next message of one. */
export type Turn =
  | { readonly to: "new"; readonly payload: typeof StartRequest.Type }
  | { readonly to: "session"; readonly sessionId: string; readonly payload: typeof MessageRequest.Type }

/** Why a turn did not complete, with what the page needs to say it well. */
export interface Refusal extends Problem {
  /** The HTTP status of a refusal before the stream began; null for a failure during it. */
  readonly status: number | null
  /** The envelope's CODE (`INSUFFICIENT_CREDITS`, `RATE_LIMITED`, `POLICY_VIOLATION`, …). */
  readonly code: string | null
  /** Seconds to wait, from `Retry-After` (429 and 503). */
  readonly retryAfter: number | null
}

/** The endpoint's path as the contract declares it (with its `/v1` prefix). */
const pathOf = (name: "start" | "message"): string => {
  const endpoint = Api.groups["huddle"]?.endpoints[name]
  if (endpoint === undefined) throw new Error(`The contract has no huddle.${name}`)
  return endpoint.path
}
const paths = { start: pathOf("start"), message: pathOf("message") }

const requestOf = (turn: Turn): HttpClientRequest.HttpClientRequest => {
  const urlParams = Schema.encodeSync(StreamParams)({ stream: true })
  return turn.to === "new"
    ? HttpClientRequest.post(paths.start, { urlParams }).pipe(
      HttpClientRequest.bodyUnsafeJson(Schema.encodeSync(StartRequest)(turn.payload))
    )
    : HttpClientRequest.post(paths.message.replace(":session_id", encodeURIComponent(turn.sessionId)), { urlParams }).pipe(
      HttpClientRequest.bodyUnsafeJson(Schema.encodeSync(MessageRequest)(turn.payload))
    )
}

/** An SSE frame (its `event:` name and the JSON of its `data:`) as the contract's event. */
const decodeEvent = Schema.decodeUnknown(
  Schema.compose(Schema.Struct({ event: Schema.String, data: Schema.parseJson() }), EventStreams.HuddleStreamEvent, { strict: false })
)
const decodeEnvelope = Schema.decodeUnknown(Envelope.ErrorBody)

const refusal = (message: string, fields: Partial<Omit<Refusal, "message">> = {}): Refusal => ({
  message,
  signedOut: false,
  status: null,
  code: null,
  retryAfter: null,
  ...fields
})

/** A refusal before the first event: its envelope, and the wait a 429 or 503 asks for. */
const refused = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<Refusal> =>
  response.json.pipe(
    Effect.flatMap(decodeEnvelope),
    Effect.option,
    Effect.map((envelope) => {
      const wait = Number(response.headers[RateLimit.headers.retryAfter])
      return refusal(Option.match(envelope, { onNone: () => `The server answered with status ${response.status}.`, onSome: (body) => body.message }), {
        status: response.status,
        code: Option.match(envelope, { onNone: () => null, onSome: (body) => body.error }),
        retryAfter: Number.isFinite(wait) && wait > 0 ? wait : null,
        signedOut: response.status === 401
      })
    })
  )

/**
 * Sends a turn and calls `onEvent` with each event as it arrives; resolves with the reply (the
 * `metadata` event), or with why there is none.
 */
export const streamTurn = (
  token: string,
  turn: Turn,
  onEvent: (event: HuddleEvent) => void
): Promise<Either.Either<Reply, Refusal>> =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(location.origin)),
      HttpClient.mapRequest(HttpClientRequest.bearerToken(token)),
      HttpClient.mapRequest(HttpClientRequest.setHeader("accept", "text/event-stream, application/json"))
    )
    const response = yield* client.execute(requestOf(turn))
    if (response.status !== 200) return Either.left(yield* refused(response))
    const ending = yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.makeChannel()),
      Stream.mapEffect((frame) => decodeEvent({ event: frame.event, data: frame.data })),
      Stream.tap((event) => Effect.sync(() => onEvent(event))),
      Stream.runFold(
        Either.left<Refusal>(refusal("The answer ended before it was complete; try again.")) as Either.Either<Reply, Refusal>,
        (so, event) =>
          event.event === "metadata"
            ? Either.right(event.data)
            : event.event === "error"
            ? Either.left(refusal(event.data.message, { code: event.data.error }))
            : so
      )
    )
    return ending
  }).pipe(
    Effect.catchAll((error) =>
      Effect.succeed(Either.left(
        error._tag === "RequestError"
          ? refusal("The server could not be reached. Check the connection and try again.")
          : error._tag === "ParseError"
          ? refusal("The server's answer was not understood; reload the page.")
          : refusal("The answer was cut off; try again.")
      ))
    ),
    Effect.scoped,
    Effect.provide(FetchHttpClient.layer),
    Effect.runPromise
  )
