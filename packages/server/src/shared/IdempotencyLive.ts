/**
 * `Idempotency-Key` at work (docs/decisions/0012-idempotency.md). `IdempotentLive` is the
 * contract's `Idempotent` middleware: on a keyed endpoint it claims the key in the
 * `IdempotencyStore` before the handler runs, and records the response that is finally sent
 * (after the error envelopes are rendered, a stream once it has ended) with a pre-response
 * handler. A retry of a finished request is answered from the record: the middleware raises
 * the recorded response as a `Replay` defect, a `Respondable` that the edge's error translation
 * sends as it is, so the handler never runs.
 *
 * Records are per credential and sealed with a key derived from the credential's secret, which
 * the database never holds (`@huddle/adapters/crypto/AnswerSealing`): the table gives away neither
 * answers nor API keys shown once.
 */
import { createHash } from "node:crypto"
import { Readable } from "node:stream"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerRespondable from "@effect/platform/HttpServerRespondable"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as AnswerSealing from "@huddle/adapters/crypto/AnswerSealing"
import { InvalidRequest } from "@huddle/domain/shared/Errors"
import { type Claim, IdempotencyStore } from "@huddle/domain/request/IdempotencyStore"
import { CurrentPrincipal } from "@huddle/domain/identity/Principal"
import * as Instruments from "@huddle/domain/observability/Instruments"
import * as Metrics from "@huddle/domain/observability/Metrics"
import { Cause, DateTime, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { Api } from "../Api.js"
import { describeDefect } from "../edge/ErrorTranslation.js"
import { IdempotencyInProgress, IdempotencyKeyReused } from "./EdgeErrors.js"
import * as Idempotency from "./Idempotency.js"
import * as Retention from "./Retention.js"
import { credentialOfHeaders } from "./Security.js"

export interface Options {
  /** How long a key's answer is kept and replayed. */
  readonly retention: Duration.Duration
  /** How long a claim holds unless renewed: a crashed process's claim frees the key after this. */
  readonly lockTimeout: Duration.Duration
  /** How often records past their retention are deleted. */
  readonly purgeInterval: Duration.Duration
}

export const defaults: Options = {
  retention: Duration.hours(24),
  lockTimeout: Duration.seconds(30),
  purgeInterval: Duration.hours(1)
}

/** `Retry-After` on 409: the first request is running, so its answer may come any moment. */
export const inProgressRetryAfterSeconds = 1

// --- the recorded response --------------------------------------------------------------------

export interface Recorded {
  readonly status: number
  /** `content-type` and the headers that describe the answer (`cache-control`, `huddle-*`). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/** Headers that belong to the answer rather than to one delivery of it (request id, rate limits). */
const isKept = (name: string) => name === "content-type" || name === "cache-control" || name.startsWith("huddle-")

const keptHeaders = (response: HttpServerResponse.HttpServerResponse): Record<string, string> => {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(response.headers)) {
    if (isKept(name)) kept[name] = value
  }
  if (kept["content-type"] === undefined && response.body._tag !== "Empty" && response.body.contentType) {
    kept["content-type"] = response.body.contentType
  }
  return kept
}

/** `[length of head][head: JSON status and headers][body]`. */
export const encodeRecorded = (recorded: Recorded): Uint8Array => {
  const head = Buffer.from(JSON.stringify({ status: recorded.status, headers: recorded.headers }))
  const length = Buffer.alloc(4)
  length.writeUInt32BE(head.length)
  return Buffer.concat([length, head, recorded.body])
}

export const decodeRecorded = (bytes: Uint8Array): Recorded => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const length = buffer.readUInt32BE(0)
  const head = JSON.parse(buffer.subarray(4, 4 + length).toString("utf8")) as Pick<Recorded, "status" | "headers">
  return { status: head.status, headers: head.headers, body: new Uint8Array(buffer.subarray(4 + length)) }
}

// --- the request ------------------------------------------------------------------------------

/**
 * What the request is: method, path with query, the organization it selects by header, body.
 * The credential is the scope already, so its own org binding needs no place here.
 */
export const fingerprintOf = (request: HttpServerRequest.HttpServerRequest, body: string): string =>
  createHash("sha256")
    .update(JSON.stringify([
      request.method,
      request.url,
      request.headers["huddle-organization"] ?? null,
      request.headers["openai-organization"] ?? null,
      body
    ]))
    .digest("hex")

/** Whether the platform decodes this request's payload from its (cached) text, as it does for JSON. */
const readsAsText = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const type = (request.headers["content-type"] ?? "application/json").toLowerCase().trim()
  return type.includes("application/json") || type.includes("x-www-form-urlencoded") || type.startsWith("text/")
}

/** The caller's secret, read as authentication read it. */
const bearerSecret = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const credential = credentialOfHeaders(request.headers)
  return credential._tag === "Bearer" ? credential.token : undefined
}

/**
 * Whether an answer is kept: 2xx and 4xx, except 429 (retrying later is the point of it) and
 * 499, which is no answer: the platform's status for a request whose client went away (or that
 * shutdown cut off), whose retry must run.
 */
export const isKeptStatus = (status: number) => status < 500 && status !== 429 && status !== 499

/** The largest streamed answer kept for replay; a longer one is not kept, and its retry runs. */
export const maxRecordedBytes = 4 * 1024 * 1024

/** The answer to a retry, raised as a defect so that nothing else runs; the edge sends it. */
export class Replay implements HttpServerRespondable.Respondable {
  constructor(readonly response: HttpServerResponse.HttpServerResponse) {}
  [HttpServerRespondable.symbol]() {
    return Effect.succeed(this.response)
  }
}

const replayOf = (recorded: Recorded): HttpServerResponse.HttpServerResponse => {
  const { "content-type": contentType, ...rest } = recorded.headers
  const headers = { ...rest, [Idempotency.headers.replayed]: "true" }
  return contentType === undefined && recorded.body.length === 0
    ? HttpServerResponse.empty({ status: recorded.status, headers })
    : HttpServerResponse.uint8Array(recorded.body, {
      status: recorded.status,
      headers,
      ...(contentType === undefined ? {} : { contentType })
    })
}

const routeKey = (method: string, path: string) => `${method} ${path}`

/** Every route of the contract that honours `Idempotency-Key`, by method and path. */
export const keyedRoutes = (): ReadonlySet<string> => {
  const routes = new Set<string>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      if (Idempotency.isKeyed(mergedAnnotations)) routes.add(routeKey(endpoint.method, endpoint.path))
    }
  })
  return routes
}

const logStoreFailure = (what: string) => (cause: Cause.Cause<unknown>) =>
  Effect.logWarning(`idempotency: ${what} failed`).pipe(Effect.annotateLogs({ failure: describeDefect(Cause.squash(cause)) }))

/**
 * The body as it is sent, kept (`complete`) once it has ended; one that fails or is cut off is
 * released by the claim's finalizer. Past `maxRecordedBytes` it is not kept (its key is released
 * at the end), so that a long stream cannot hold unbounded memory or rows.
 */
const recording = (
  response: HttpServerResponse.HttpServerResponse,
  stream: Stream.Stream<Uint8Array, unknown>,
  complete: (recorded: Recorded) => Effect.Effect<void>,
  release: Effect.Effect<void>
) => {
  const { contentLength, contentType } = response.body as HttpBody.Stream | HttpBody.Raw
  const headers = keptHeaders(response)
  const chunks: Array<Uint8Array> = []
  let size = 0
  const recorded = Stream.concat(
    Stream.mapChunks(stream, (chunk) => {
      for (const part of chunk) {
        size += part.length
        if (size <= maxRecordedBytes) chunks.push(part)
      }
      return chunk
    }),
    // A stream that ended by reporting a failure is, like a 5xx, not kept.
    Stream.execute(Effect.suspend(() =>
      size <= maxRecordedBytes && isKeptStatus(Retention.statusOf(response))
        ? complete({ status: response.status, headers, body: Buffer.concat(chunks) })
        : release
    ))
  )
  return HttpServerResponse.setBody(response, HttpBody.stream(recorded, contentType, contentLength))
}

/** What the request finally answers, kept (`complete`) or, when it is not to be kept, released. */
const keepAnswer = (complete: (recorded: Recorded) => Effect.Effect<void>, release: Effect.Effect<void>) =>
  HttpApp.appendPreResponseHandler((_request, response) => {
    if (!isKeptStatus(Retention.statusOf(response))) return Effect.as(release, response)
    const headers = keptHeaders(response)
    const body = response.body
    switch (body._tag) {
      case "Uint8Array":
        return Effect.as(complete({ status: response.status, headers, body: body.body }), response)
      case "Empty":
        return Effect.as(complete({ status: response.status, headers, body: new Uint8Array(0) }), response)
      case "Stream":
        return Effect.succeed(recording(response, body.stream, complete, release))
      case "Raw":
        // A streamed answer's body (`EventStream`) is Node's readable: read as a stream here,
        // only when a key asks for it to be kept.
        return body.body instanceof Readable
          ? Effect.succeed(recording(response, NodeStream.fromReadable(() => body.body as Readable, (error) => error), complete, release))
          : Effect.as(release, response)
      default:
        return Effect.as(release, response)
    }
  })

/** Lets the claimed request run, renewing its lock, and keeps what it answers. */
const watch = (
  { options, store }: { readonly store: IdempotencyStore["Type"]; readonly options: Options },
  claim: Claim,
  fingerprint: string,
  key: Buffer
) =>
  Effect.gen(function*() {
    let settled = false
    const settle = (effect: Effect.Effect<unknown>, what: string) =>
      Effect.suspend(() => {
        if (settled) return Effect.void
        settled = true
        return effect.pipe(Effect.asVoid, Effect.catchAllCause(logStoreFailure(what)))
      })
    const release = settle(store.release(claim), "release")
    const complete = (recorded: Recorded) =>
      isKeptStatus(recorded.status)
        ? settle(
          store.complete(claim, AnswerSealing.seal(key, fingerprint, encodeRecorded(recorded))).pipe(
            // Its lock lapsed (the database was away longer than the lock) and a retry took the key over.
            Effect.tap((kept) => kept ? Effect.void : Effect.logWarning("idempotency: the key's claim was lost before its answer was kept"))
          ),
          "record"
        )
        : release

    // Whatever happens to the request (a failure, an interruption, a client gone), the key
    // is given back when its scope closes unless an answer was kept.
    yield* Effect.addFinalizer(() => release)
    // A failed renewal is logged and tried again at the next tick: one passing fault must
    // not let the lock lapse while the request still runs (a retry would then run it twice).
    const renewEvery = Duration.divide(options.lockTimeout, 3).pipe(Option.getOrElse(() => options.lockTimeout))
    yield* DateTime.now.pipe(
      Effect.flatMap((now) => store.renew(claim, DateTime.addDuration(now, options.lockTimeout))),
      Effect.catchAllCause((cause) => Effect.as(logStoreFailure("renew")(cause), true)),
      Effect.delay(renewEvery),
      Effect.repeat({ while: (held) => held && !settled }),
      Effect.forkScoped
    )
    yield* keepAnswer(complete, release)
  })

/** The contract's `Idempotent` middleware. */
export const IdempotentLive = (options: Options = defaults) =>
  Layer.effect(
    Idempotency.Idempotent,
    Effect.gen(function*() {
      const store = yield* IdempotencyStore
      const metrics = yield* Metrics.Metrics
      const routes = keyedRoutes()

      return Effect.gen(function*() {
        const { route } = yield* HttpRouter.RouteContext
        if (!routes.has(routeKey(route.method, route.path))) return
        const request = yield* HttpServerRequest.HttpServerRequest
        const given = request.headers[Idempotency.headers.key]
        if (given === undefined) return
        if (!Idempotency.isValidKey(given)) {
          return yield* Effect.fail(
            new InvalidRequest({ message: `Idempotency-Key must be 1 to ${Idempotency.maxKeyLength} printable ASCII characters` })
          )
        }
        const principal = yield* Effect.serviceOption(CurrentPrincipal)
        const secret = bearerSecret(request)
        if (Option.isNone(principal) || secret === undefined) {
          return yield* Effect.dieMessage("Idempotent ran without a principal: declare it before Authenticated on the group")
        }
        // Read once here; the platform caches the text for the handler's own decoding. It does
        // not cache other readings of a body (bytes, multipart), so a body the handler would read
        // that way cannot be fingerprinted first; no keyed endpoint takes one anyway.
        if (!readsAsText(request)) {
          return yield* Effect.fail(
            new InvalidRequest({ message: "A request with an Idempotency-Key must send its body as JSON (content-type: application/json)" })
          )
        }
        const body = yield* Effect.orDie(request.text)
        const fingerprint = fingerprintOf(request, body)
        const key = AnswerSealing.sealingKey(secret)
        const now = yield* DateTime.now
        const claimed = yield* store.claim({
          scope: principal.value.credential_id,
          key: given,
          fingerprint,
          now,
          lockedUntil: DateTime.addDuration(now, options.lockTimeout),
          expiredBefore: DateTime.subtractDuration(now, options.retention)
        })
        if (claimed._tag === "Claimed") return yield* watch({ store, options }, claimed.claim, fingerprint, key)
        if (claimed.fingerprint !== fingerprint) {
          return yield* Effect.fail(
            new IdempotencyKeyReused({
              message: "This Idempotency-Key was already used with a different request; use a new key for a new request"
            })
          )
        }
        if (claimed._tag === "InProgress") {
          yield* HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(
              response.status === 409
                ? HttpServerResponse.setHeader(response, "retry-after", String(inProgressRetryAfterSeconds))
                : response
            )
          )
          return yield* Effect.fail(
            new IdempotencyInProgress({
              message: "A request with this Idempotency-Key is still running; retry shortly to get its answer"
            })
          )
        }
        const plain = AnswerSealing.unseal(key, fingerprint, claimed.outcome)
        if (plain === undefined) return yield* Effect.dieMessage("idempotency: a recorded answer could not be unsealed")
        metrics.add(Instruments.idempotentReplays, {})
        return yield* Effect.die(new Replay(replayOf(decodeRecorded(plain))))
      })
    })
  )

/** Deletes records past their retention now and then, on every instance (harmless when they race). */
export const purging = (options: Options = defaults) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const store = yield* IdempotencyStore
      yield* DateTime.now.pipe(
        Effect.flatMap((now) => store.purge(DateTime.subtractDuration(now, options.retention), now)),
        Effect.catchAllCause(logStoreFailure("purge")),
        Effect.delay(options.purgeInterval),
        Effect.repeat(Schedule.forever),
        Effect.forkScoped
      )
    })
  )
