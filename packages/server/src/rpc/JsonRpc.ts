/**
 * JSON-RPC 2.0 (https://www.jsonrpc.org/specification), independent of HTTP and of the methods:
 * parses a body, validates each request, dispatches it to a method of a table, and gathers the
 * answers of a batch. What HTTP makes of the answer (status, 204) is the caller's business; the
 * `Answer` says which status a single call's outcome asks for: 200 for any request that says
 * `jsonrpc: "2.0"` (its clients read failures from the body, and take any other status for a
 * transport failure), the status the same failure has over REST for the bare shape.
 *
 * Deviation from the letter of the specification, as the product's spec asks: a request object
 * without `jsonrpc` (the bare `{method, params}` shape) is accepted and always answered, with
 * `id: null` when it has no `id`; only a request that says `jsonrpc: "2.0"` and has no `id` is a
 * notification.
 */
import { Cause, Effect, Either, Option, Schema } from "effect"
import * as RpcErrors from "./RpcErrors.js"

export type Id = string | number | null

/** Which rate limit a method counts against (applied by the hook `Options.admit`). */
export type RateClass = "intent_submission" | "read"

/** A method of the table, with its types erased: what dispatch and the OpenRPC document need. */
export interface Method<C> {
  readonly name: string
  readonly summary: string
  readonly description: string
  readonly rateClass: RateClass
  /** A struct: params are passed by name. */
  readonly params: Schema.Schema.AnyNoContext
  readonly result: Schema.Schema.AnyNoContext
  /** The name of the result in the OpenRPC document. */
  readonly resultName: string
  /** The domain errors it may answer with, for the OpenRPC document. */
  readonly errors: ReadonlyArray<RpcErrors.DomainErrorTag>
  /** Decodes the params, runs the handler, encodes the result. */
  readonly invoke: (params: unknown, caller: C) => Effect.Effect<unknown, RpcErrors.RpcError>
}

export interface MethodSpec<P, PI, A, AI, C, E extends RpcErrors.DomainError> {
  readonly name: string
  readonly summary: string
  readonly description: string
  readonly rateClass: RateClass
  readonly params: Schema.Schema<P, PI>
  readonly result: Schema.Schema<A, AI>
  readonly resultName: string
  readonly errors: ReadonlyArray<E["_tag"]>
  readonly handler: (params: P, caller: C) => Effect.Effect<A, E>
}

/**
 * A method whose params are decoded with `params` and whose result is encoded with `result`:
 * the same schemas the OpenRPC document is generated from. An unknown param is refused (-32602
 * naming it), as an unknown field of a REST body is: a misspelt option must not be ignored.
 */
export const method = <P, PI, A, AI, C, E extends RpcErrors.DomainError>(
  spec: MethodSpec<P, PI, A, AI, C, E>
): Method<C> => {
  const decode = Schema.decodeUnknown(spec.params, { errors: "all", onExcessProperty: "error" })
  const encode = Schema.encode(spec.result)
  return {
    name: spec.name,
    summary: spec.summary,
    description: spec.description,
    rateClass: spec.rateClass,
    params: spec.params,
    result: spec.result,
    resultName: spec.resultName,
    errors: spec.errors,
    invoke: (params, caller) =>
      (Array.isArray(params)
        ? Effect.fail(RpcErrors.invalidParams([{ field: "", message: "params must be an object of named parameters" }]))
        : decode(params ?? {}).pipe(Effect.mapError(RpcErrors.fromParseError))).pipe(
          Effect.flatMap((decoded) => Effect.mapError(spec.handler(decoded, caller), RpcErrors.fromDomain)),
          // The handler's result is ours: failing to encode it is a bug, not the caller's fault.
          Effect.flatMap((result) => Effect.orDie(encode(result)))
        )
  }
}

export type Response =
  | { readonly jsonrpc: "2.0"; readonly result: unknown; readonly id: Id }
  | { readonly jsonrpc: "2.0"; readonly error: RpcErrors.ErrorObject; readonly id: Id }

// --- Requests ----------------------------------------------------------------------------------

interface Call {
  readonly method: string
  readonly params: unknown
  readonly id: Id
  /** Sent with `jsonrpc: "2.0"` and no `id`: runs, is not answered. */
  readonly notification: boolean
  /** Sent with `jsonrpc: "2.0"`: a failure is answered 200, as JSON-RPC clients expect. */
  readonly versioned: boolean
}

interface Invalid {
  readonly error: RpcErrors.RpcError
  readonly id: Id
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is Id =>
  typeof value === "string" || value === null || (typeof value === "number" && Number.isFinite(value))

/** Checks one request object; an invalid one is answered (with its id when that was readable). */
export const validate = (value: unknown): Either.Either<Call, Invalid> => {
  if (!isRecord(value)) {
    return Either.left({ error: RpcErrors.invalidRequest("A request must be a JSON object"), id: null })
  }
  const hasId = "id" in value
  if (hasId && !isId(value.id)) {
    return Either.left({ error: RpcErrors.invalidRequest("id must be a string, a number or null"), id: null })
  }
  const id: Id = hasId && isId(value.id) ? value.id : null
  const invalid = (detail: string) => Either.left({ error: RpcErrors.invalidRequest(detail), id })
  if ("jsonrpc" in value && value.jsonrpc !== "2.0") return invalid("jsonrpc must be \"2.0\"")
  if (typeof value.method !== "string") return invalid("method must be a string")
  // `params: null` is read as absent; any other value must be structured.
  if (value.params !== undefined && value.params !== null && typeof value.params !== "object") {
    return invalid("params must be an object or an array")
  }
  return Either.right({
    method: value.method,
    params: value.params ?? undefined,
    id,
    notification: value.jsonrpc === "2.0" && !hasId,
    versioned: value.jsonrpc === "2.0"
  })
}

// --- Dispatch ----------------------------------------------------------------------------------

/** What to answer over HTTP: `body: undefined` means no content (only notifications). */
export interface Answer {
  readonly status: number
  readonly body: Response | ReadonlyArray<Response> | undefined
  /**
   * The status the outcome has over REST: `status`, except for a JSON-RPC 2.0 call that failed,
   * answered 200 whatever its error. What decides, e.g., whether the answer is kept for a retry.
   */
  readonly restStatus: number
}

export interface Options<C> {
  /**
   * Runs before a method, once it is known: the place for per-method rate limits
   * (`method.rateClass`). Failing it answers the call with that error.
   */
  readonly admit?: ((method: Method<C>, caller: C) => Effect.Effect<void, RpcErrors.RpcError>) | undefined
  /** Turns a defect (a bug, storage down) into the error the caller sees; logging is its job. */
  readonly onDefect: (defect: unknown, method: string) => Effect.Effect<RpcErrors.RpcError>
}

/** The most requests one batch may hold. */
export const maxBatchSize = 100
/** How many calls of one batch run at once. */
export const batchConcurrency = 4

const success = (result: unknown, id: Id): Response => ({ jsonrpc: "2.0", result, id })
const failure = (error: RpcErrors.RpcError, id: Id): Response => ({ jsonrpc: "2.0", error: RpcErrors.toObject(error), id })

export const make = <C>(methods: ReadonlyArray<Method<C>>, options: Options<C>) => {
  const table = new Map(methods.map((m) => [m.name, m]))

  /** Runs one valid call; never fails (but is interrupted with the request). */
  const run = (call: Call, caller: C): Effect.Effect<Either.Either<unknown, RpcErrors.RpcError>> => {
    const found = table.get(call.method)
    if (found === undefined) return Effect.succeed(Either.left(RpcErrors.methodNotFound(call.method)))
    const admitted = options.admit === undefined ? Effect.void : options.admit(found, caller)
    return admitted.pipe(
      Effect.zipRight(found.invoke(call.params, caller)),
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const failed = Cause.failureOption(cause)
        return Option.isSome(failed) ? Effect.fail(failed.value) : Effect.flip(options.onDefect(Cause.squash(cause), call.method))
      }),
      Effect.either,
      Effect.annotateLogs("rpc_method", call.method)
    )
  }

  /** The answer to one member, or none for a notification. */
  const member = (
    value: unknown,
    caller: C
  ): Effect.Effect<Option.Option<{ readonly response: Response; readonly status: number; readonly restStatus: number }>> =>
    Either.match(validate(value), {
      onLeft: (invalid) =>
        Effect.succeed(Option.some({ response: failure(invalid.error, invalid.id), status: invalid.error.status, restStatus: invalid.error.status })),
      onRight: (call) =>
        Effect.map(run(call, caller), (outcome) =>
          call.notification
            ? Option.none()
            : Option.some(
              Either.match(outcome, {
                onLeft: (error) => ({
                  response: failure(error, call.id),
                  status: call.versioned ? 200 : error.status,
                  restStatus: error.status
                }),
                onRight: (result) => ({ response: success(result, call.id), status: 200, restStatus: 200 })
              })
            ))
    })

  const parse = (text: string): Either.Either<unknown, RpcErrors.RpcError> =>
    Either.try({
      try: (): unknown => JSON.parse(text),
      catch: () => RpcErrors.parseError(text.trim() === "" ? "The request body is empty" : "The request body is not valid JSON")
    })

  const single = (error: RpcErrors.RpcError): Answer => ({ status: error.status, body: failure(error, null), restStatus: error.status })

  /** Answers a request body. */
  const answer = (text: string, caller: C): Effect.Effect<Answer> =>
    Either.match(parse(text), {
      onLeft: (error) => Effect.succeed(single(error)),
      onRight: (json) => {
        if (!Array.isArray(json)) {
          return Effect.map(member(json, caller), Option.match({
            onNone: (): Answer => ({ status: 204, body: undefined, restStatus: 204 }),
            onSome: ({ response, restStatus, status }): Answer => ({ status, body: response, restStatus })
          }))
        }
        if (json.length === 0) return Effect.succeed(single(RpcErrors.invalidRequest("A batch must hold at least one request")))
        if (json.length > maxBatchSize) {
          return Effect.succeed(single(RpcErrors.invalidRequest(`A batch may hold at most ${maxBatchSize} requests`)))
        }
        return Effect.forEach(json, (value) => member(value, caller), { concurrency: batchConcurrency }).pipe(
          Effect.map((answers): Answer => {
            const responses = answers.flatMap((entry) => Option.toArray(Option.map(entry, ({ response }) => response)))
            // A batch is 200 whatever its members say, and is kept for a retry as such.
            return responses.length === 0
              ? { status: 204, body: undefined, restStatus: 204 }
              : { status: 200, body: responses, restStatus: 200 }
          })
        )
      }
    })

  return { answer, methods: table }
}
