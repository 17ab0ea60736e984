/**
 * Gives every failure that reaches the edge a place in the error envelope: the platform's own
 * failures (schema decoding, malformed bodies, unknown routes) become our typed errors (a path
 * that exists asked with another method: 405 with `Allow`, from edge/Routes.ts), and
 * defects become `INTERNAL` without internals, except a defect that is an answer in itself (the
 * platform's `Respondable`: an idempotent replay), which is sent. Typed errors pass through unchanged and are
 * encoded by the contract's error schemas (shared/Envelope.ts), except on the paths of a group whose
 * dialect (shared/ErrorTable.ts, `Dialect`) is OpenAI's, which answer them here in OpenAI's
 * envelope (openai/OpenAiErrors.ts).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerRespondable from "@effect/platform/HttpServerRespondable"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlFailure from "@huddle/adapters/sql/SqlFailure"
import { InvalidRequest, NotFound } from "@huddle/domain/shared/Errors"
import { Cause, Context, Effect, FiberRef, Layer, Option, Predicate, Schema } from "effect"
import { Api } from "../Api.js"
import * as AnthropicErrors from "../anthropic/AnthropicErrors.js"
import * as OpenAiErrors from "../openai/OpenAiErrors.js"
import { Internal, MethodNotAllowed, PayloadTooLarge, ServiceUnavailable } from "../shared/EdgeErrors.js"
import * as Envelope from "../shared/Envelope.js"
import { Dialect, table } from "../shared/ErrorTable.js"
import { creditsChargedHeader } from "../shared/Headers.js"
import * as RequestEdge from "./RequestEdge.js"
import * as Routes from "./Routes.js"

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const describeIssue = (issue: Issue): string =>
  issue.path.length > 0
    ? `${issue.path.map(String).join(".")}: ${issue.message}`
    // A failure at the root is a body of the wrong kind; the schema's own text would dump its AST.
    : issue.message.startsWith("Expected ")
    ? "The request body must be a JSON object"
    : issue.message

const keyOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

/** The alternatives an optional or nullable field adds to every failure of its own schema. */
const absentAlternative = /^Expected (null|undefined), actual /

/**
 * A union member's objection that the value has no `type` (the members that require one), when
 * another member got further into the same value: the value was meant for that one (a message
 * item, whose `type` may be left out, with a part it cannot take).
 */
const anotherMembersType = (issue: Issue, issues: ReadonlyArray<Issue>): boolean => {
  if (issue.message !== "is missing" || issue.path.at(-1) !== "type") return false
  const parent = keyOf(issue.path.slice(0, -1))
  return issues.some((other) =>
    other.path.length > issue.path.length && (parent === "" || keyOf(other.path).startsWith(`${parent}.`))
  )
}

/**
 * A field's failure beside a refused `type` of the same value: a value of the wrong kind is
 * refused for its kind, not for the fields another kind would have (an image part's `image_url`
 * is not unexpected, the image is).
 */
const besideRefusedType = (issue: Issue, issues: ReadonlyArray<Issue>): boolean => {
  if (issue.path.length === 0 || issue.path.at(-1) === "type") return false
  const parent = keyOf(issue.path.slice(0, -1))
  return issues.some((other) =>
    other.path.length === issue.path.length && other.path.at(-1) === "type" && other.message !== "is missing" &&
    keyOf(other.path.slice(0, -1)) === parent
  )
}

/**
 * The issues worth reading: without the "or absent" alternatives of optional fields, without
 * another member's missing `type` or the fields beside a refused one (above), without a
 * union's failure at a path when one of its members failed deeper inside it (the member the
 * value was meant for), and with the expected literals of one path merged.
 */
const relevant = (issues: ReadonlyArray<Issue>): ReadonlyArray<Issue> => {
  const present = issues.filter((issue) =>
    !absentAlternative.test(issue.message) && !anotherMembersType(issue, issues) && !besideRefusedType(issue, issues)
  )
  const kept = present.length > 0 ? present : issues
  const keys = kept.map((issue) => keyOf(issue.path))
  const deepest = kept.filter((_, i) =>
    !keys.some((other, j) => j !== i && kept[j]!.path.length > kept[i]!.path.length && other.startsWith(`${keys[i]}.`))
  )
  const merged: Array<Issue> = []
  for (const issue of deepest) {
    const literal = /^Expected ("[^"]*"), actual (.*)$/.exec(issue.message)
    const previous = merged.at(-1)
    const previousLiteral = previous && /^Expected ("[^"]*"(?: \| "[^"]*")*), actual (.*)$/.exec(previous.message)
    if (literal && previous && previousLiteral && keyOf(previous.path) === keyOf(issue.path) && previousLiteral[2] === literal[2]) {
      merged[merged.length - 1] = { path: issue.path, message: `Expected ${previousLiteral[1]} | ${literal[1]}, actual ${literal[2]}` }
    } else {
      merged.push(issue)
    }
  }
  return merged
}

const describeIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.length === 0 ? "The request is invalid" : relevant(issues).slice(0, 5).map(describeIssue).join("; ")

const pathOf = (url: string) => url.split("?")[0] ?? url

/**
 * Whether a request path is one of an endpoint's: the path itself, or, for a path with
 * parameters, anything from its first parameter on (`/v1/models/:model` covers
 * `/v1/models/a/b`), so that a mistyped path on a group is still answered in its dialect. Any
 * method: a wrong method on a group's path is answered in its dialect too.
 */
const covers = (pattern: string) => {
  const parameter = pattern.indexOf(":")
  return parameter === -1
    ? (path: string) => path === pattern
    : (path: string) => path.startsWith(pattern.slice(0, parameter))
}

const territories = Object.values(Api.groups).flatMap((group) => {
  const dialect = Context.getOrElse(group.annotations, Dialect, () => "huddle" as const)
  return Object.values(group.endpoints).map((endpoint) => ({ dialect, covers: covers(endpoint.path) }))
})

/**
 * The resources of OpenAI's API (its API reference) that Huddle does not serve, or serves only in
 * part (`/v1/responses`: created, never kept to be read back): what an OpenAI client may call here.
 */
const openAiResources: ReadonlyArray<{ readonly path: string }> = [
  { path: "/v1/responses" },
  { path: "/v1/chat" },
  { path: "/v1/completions" },
  { path: "/v1/embeddings" },
  { path: "/v1/moderations" },
  { path: "/v1/images" },
  { path: "/v1/audio" },
  { path: "/v1/files" },
  { path: "/v1/uploads" },
  { path: "/v1/batches" },
  { path: "/v1/fine_tuning" },
  { path: "/v1/assistants" },
  { path: "/v1/threads" },
  { path: "/v1/vector_stores" },
  { path: "/v1/conversations" },
  { path: "/v1/realtime" },
  { path: "/v1/evals" },
  { path: "/v1/containers" },
  { path: "/v1/videos" },
  { path: "/v1/organization" }
]

/** What of OpenAI's API Huddle serves, from the contract, for the message that names it. */
const served = Object.values(Api.groups)
  .filter((group) => Context.getOrElse(group.annotations, Dialect, () => "huddle" as const) === "openai")
  .flatMap((group) => Object.values(group.endpoints))
  .map((endpoint) => `${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`)
  .join(", ")

/** The OpenAI resource an unserved path belongs to: one none of the contract's endpoints covers. */
const unservedResource = (path: string) =>
  territories.some((territory) => territory.covers(path))
    ? undefined
    : openAiResources.find((resource) => path === resource.path || path.startsWith(`${resource.path}/`))

/**
 * The error dialect a path is answered in: that of the group (of the contract, `Api`) whose
 * endpoint it is, as the group's `Dialect` annotation says; OpenAI's on a resource of OpenAI's
 * API that no group serves (an OpenAI client's request); the Huddle envelope elsewhere.
 */
export const dialectOf = (path: string): Dialect["Type"] =>
  territories.find((territory) => territory.covers(path))?.dialect ??
    (unservedResource(path) !== undefined ? "openai" : "huddle")

/** The answer to an OpenAI client calling what Huddle does not serve, or `undefined` for any other path. */
const unservedAnswer = (method: string, path: string) => {
  const resource = unservedResource(path)
  if (resource === undefined) return undefined
  return OpenAiErrors.unknownUrl(`Huddle does not serve ${method} ${path}; of OpenAI's API it serves ${served}`)
}

/**
 * A path that exists asked with a method it does not have: 405 with `Allow` (RFC 9110 §15.5.6),
 * in the path's dialect. Answered here rather than failed with: the error is no endpoint's, so
 * the contract documents it on none and could not encode it.
 */
const methodNotAllowed = (method: string, path: string, allowed: ReadonlyArray<string>) => {
  const error = new MethodNotAllowed({ message: `${path} does not take ${method}; it takes ${allowed.join(", ")}` })
  const dialect = dialectOf(path)
  const response = dialect === "openai"
    ? OpenAiErrors.response(error)
    : dialect === "anthropic"
    ? AnthropicErrors.response(error)
    : HttpServerResponse.unsafeJson(Schema.encodeSync(Envelope.MethodNotAllowed)(error), { status: table.MethodNotAllowed.status })
  return HttpServerResponse.setHeader(response, "allow", allowed.join(", "))
}

/** The request field a decoding issue is about, as OpenAI writes it (`messages[0].role`). */
const fieldOf = (path: ReadonlyArray<PropertyKey>): string | undefined =>
  path.length === 0
    ? undefined
    : path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`).join("")

export const translate = (error: unknown): unknown => {
  if (Predicate.isTagged(error, "HttpApiDecodeError")) {
    const issues = (error as unknown as { issues: ReadonlyArray<Issue> }).issues
    const field = fieldOf(relevant(issues)[0]?.path ?? [])
    return new InvalidRequest({ message: describeIssues(issues), ...(field === undefined ? {} : { field }) })
  }
  if (Predicate.isTagged(error, "RouteNotFound")) {
    const request = (error as unknown as { request: { method: string; url: string } }).request
    return new NotFound({ message: `No route for ${request.method} ${pathOf(request.url)}` })
  }
  if (Predicate.isTagged(error, "RequestError")) {
    const { cause, reason } = error as unknown as { reason: string; cause: unknown }
    if (String(cause).includes("maxBytes exceeded")) {
      return new PayloadTooLarge({ message: "The request body is too large" })
    }
    return new InvalidRequest({
      message: reason === "Decode" ? "The request body is not valid JSON" : "The request could not be read"
    })
  }
  return error
}

export const defectToError = (defect: unknown, requestId?: string) =>
  SqlFailure.classify(defect) === "unavailable"
    ? new ServiceUnavailable({ message: "The service is temporarily unavailable; retry shortly" })
    : new Internal({
      message: requestId === undefined
        ? "An unexpected error occurred"
        : `An unexpected error occurred; quote request id ${requestId} when reporting it`
    })

/**
 * A defect that reached the edge: logged once, with its cause (the log is for the operator), and
 * the error that answers it (the answer is for the client: no internals). A bug is an error; an
 * outage is a warning, since it is answered 503 and the client retries.
 */
export const answerDefect = (defect: unknown, annotations: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const error = defectToError(defect, yield* FiberRef.get(RequestEdge.currentRequestId))
    const log = error._tag === "ServiceUnavailable" ? Effect.logWarning("storage unavailable") : Effect.logError("unexpected failure")
    yield* log.pipe(Effect.annotateLogs({ ...annotations, defect: describeDefect(defect) }))
    return error
  })

/** How long a client is asked to wait (`Retry-After`) when storage is unreachable. */
export const unavailableRetryAfterSeconds = 2

/**
 * Every 503 gets `Retry-After`, whichever envelope answers it: set here, once, on the response
 * that is finally sent, unless whoever refused already chose one (the rate limiter does).
 */
const retryAfterOnUnavailable = (error: unknown) =>
  Predicate.isTagged(error, "ServiceUnavailable")
    ? HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        response.status === 503 && response.headers["retry-after"] === undefined
          ? HttpServerResponse.setHeader(response, "retry-after", String(unavailableRetryAfterSeconds))
          : response
      )
    )
    : Effect.void

/**
 * A model call that failed after it produced output was charged for that output: the failure
 * says how much (`creditsChargedHeader`), as a whole answer does, whichever envelope answers it.
 */
const chargedOnUpstreamFailure = (error: unknown) =>
  Predicate.isTagged(error, "UpstreamUnavailable") && Predicate.hasProperty(error, "charged") && typeof error.charged === "number"
    ? HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, creditsChargedHeader, String(error.charged)))
    )
    : Effect.void

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined

const jsonContentType = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i

/** Rejects, before anything is read, a body that is declared too large or is not JSON. */
const checkBody = (request: HttpServerRequest.HttpServerRequest, maxBodyBytes: number) => {
  if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
    return new PayloadTooLarge({ message: `The request body exceeds ${maxBodyBytes} bytes` })
  }
  if (hasBody(request) && !jsonContentType.test(request.headers["content-type"] ?? "")) {
    return new InvalidRequest({ message: "The request body must be JSON, sent with Content-Type: application/json" })
  }
  return undefined
}

/**
 * A stack overflow while a request is decoded: JSON nested so deeply (`[[[[…`, well within the
 * body limit) that formatting or decoding it recurses past the stack. The client's fault: 400.
 */
const isTooDeep = (defect: unknown) =>
  defect instanceof RangeError && defect.message.includes("Maximum call stack size exceeded")

const translatable = (defect: unknown) =>
  Predicate.isTagged(defect, "RequestError") || Predicate.isTagged(defect, "HttpApiDecodeError") ||
  Predicate.isTagged(defect, "RouteNotFound")

/**
 * Wraps the API's router, inside the contract's error encoding: so whatever it fails with here
 * is answered with the envelope and the right status. With it, the body limit for bodies read as
 * a stream (chunked, no length to check up front): the platform's `MaxBodySize`, a
 * `Context.Reference` read per request, provided once to the server's requests
 * (`RequestContext.serve` names it) rather than to each, which cost a region of its own.
 */
export const make = (options: { readonly maxBodyBytes: number }) =>
  Layer.merge(middleware(options), Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(options.maxBodyBytes))))

const middleware = (options: { readonly maxBodyBytes: number }) =>
  HttpApiBuilder.middleware(
    Api,
    (app) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const rejected = checkBody(request, options.maxBodyBytes)
        const attempt: Effect.Effect<
          HttpServerResponse.HttpServerResponse,
          InvalidRequest | PayloadTooLarge,
          HttpServerRequest.HttpServerRequest
        > = rejected
          ? Effect.fail(rejected)
          : app
        const answered = attempt.pipe(
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
            const failure = Cause.failureOption(cause)
            if (Predicate.isTagged(failure._tag === "Some" ? failure.value : Cause.squash(cause), "RouteNotFound")) {
              const allowed = Routes.allowedMethods(request.method, request.url)
              if (allowed.length > 0) return Effect.succeed(methodNotAllowed(request.method, pathOf(request.url), allowed))
              const unserved = unservedAnswer(request.method, pathOf(request.url))
              if (unserved !== undefined) return Effect.succeed(unserved)
            }
            if (failure._tag === "Some") return Effect.fail(translate(failure.value) as never)
            const defect = Cause.squash(cause)
            if (translatable(defect)) return Effect.fail(translate(defect) as never)
            if (isTooDeep(defect)) {
              return Effect.fail(new InvalidRequest({ message: "The request body is nested too deeply" }) as never)
            }
            if (HttpServerRespondable.isRespondable(defect)) return HttpServerRespondable.toResponse(defect)
            return Effect.flatMap(answerDefect(defect), (error) => Effect.fail(error as never))
          }),
          Effect.tapError((error) => Effect.zipRight(retryAfterOnUnavailable(error), chargedOnUpstreamFailure(error)))
        )
        // The OpenAI-compatible group, and OpenAI's resources that Huddle does not serve, answer every
        // failure in OpenAI's envelope (DESIGN §4), the Messages API in Anthropic's (DESIGN §8), here
        // and nowhere else; the others leave it to the contract's error schemas.
        const dialect = dialectOf(pathOf(request.url))
        return dialect === "openai"
          ? Effect.catchAll(answered, (error) => Effect.succeed(OpenAiErrors.response(error)))
          : dialect === "anthropic"
          ? Effect.catchAll(answered, (error) => Effect.succeed(AnthropicErrors.response(error)))
          : answered
      })
  )

const textField = (value: unknown, field: string): string | undefined =>
  Predicate.hasProperty(value, field) && typeof value[field] === "string" ? value[field] : undefined

const describeLink = (link: unknown): string => {
  if (typeof link === "string") return link
  const kind = textField(link, "_tag") ?? (link instanceof Error ? link.name : undefined)
  if (kind === undefined) return "unknown defect"
  const code = textField(link, "code")
  const constraint = textField(link, "constraint")
  const message = textField(link, "message")
  return [message ? `${kind}: ${message}` : kind, code && `(${code})`, constraint && `constraint ${constraint}`]
    .filter(Boolean).join(" ")
}

/**
 * A defect for the log: the kind and message of it and of its causes (with a database error's
 * SQLSTATE and constraint), never a stack, nor a row's values (PostgreSQL's `detail` holds those).
 */
export const describeDefect = (defect: unknown): string => {
  const links: Array<string> = []
  for (let link = defect; link !== undefined && link !== null && links.length < 5; link = Predicate.hasProperty(link, "cause") ? link.cause : undefined) {
    links.push(describeLink(link))
  }
  return links.join(" <- ")
}
