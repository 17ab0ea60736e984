/** A form's input checked with the contract's request schema: the server's rules, said before sending. */
import { Either, ParseResult, Schema } from "effect"
import type { Problem } from "./api.js"

export const validate = <A, I>(schema: Schema.Schema<A, I>, input: I): Either.Either<A, Problem> =>
  Schema.decodeEither(schema)(input).pipe(
    Either.mapLeft((error) => ({
      message: ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "Check the form and try again.",
      signedOut: false
    }))
  )
