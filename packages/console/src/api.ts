/**
 * The console's only way to the server: the typed client derived from the contract
 * (docs/decisions/0017-browser-contract.md). Answers are decoded with the server's own schemas,
 * and error envelopes come back as the tagged errors they were raised as.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { Api, Envelope } from "@huddle/server/contract"
import { Effect, Either, Option, Predicate, Schema } from "effect"

const makeClient = (token: string | null) =>
  HttpApiClient.make(Api, {
    baseUrl: location.origin,
    ...(token === null ? {} : { transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token)) })
  })

export type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** What went wrong, said for the person at the page. */
export interface Problem {
  readonly message: string
  /** The server no longer accepts the session (401): the person has to log in again. */
  readonly signedOut: boolean
}

const decodeEnvelope = Schema.decodeUnknown(Envelope.ErrorBody)

/**
 * A failure of a call as a problem to show. The contract's errors carry the server's message;
 * an answer the contract does not declare for the endpoint still has the envelope, read with
 * the contract's schema of it.
 */
const toProblem = (error: unknown): Effect.Effect<Problem> => {
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return Effect.succeed({ message: "The server could not be reached. Check the connection and try again.", signedOut: false })
    }
    const { json, status } = error.response
    return Effect.flatMap(json, decodeEnvelope).pipe(
      Effect.option,
      Effect.map((envelope) => ({
        message: Option.match(envelope, {
          onNone: () => `The server answered with status ${status}.`,
          onSome: (body) => body.message
        }),
        signedOut: status === 401
      }))
    )
  }
  if (Predicate.isTagged(error, "ParseError")) {
    return Effect.succeed({ message: "The server's answer was not understood; reload the page.", signedOut: false })
  }
  if (Predicate.hasProperty(error, "message") && typeof error.message === "string") {
    return Effect.succeed({ message: error.message, signedOut: Predicate.isTagged(error, "Unauthorized") })
  }
  return Effect.succeed({ message: "Something went wrong; try again.", signedOut: false })
}

/** Runs one or more calls with the client of this session (`token`, or none before logging in). */
export const call = <A, E>(
  token: string | null,
  use: (client: Client) => Effect.Effect<A, E>
): Promise<Either.Either<A, Problem>> =>
  makeClient(token).pipe(
    Effect.flatMap(use),
    Effect.matchEffect({
      onFailure: (error) => Effect.map(toProblem(error), Either.left),
      onSuccess: (value) => Effect.succeed(Either.right(value))
    }),
    Effect.provide(FetchHttpClient.layer),
    Effect.runPromise
  )
