/** Cursor pagination: lists are ordered by id (time-ordered), newest first. */
import { Either, Encoding, ParseResult, Schema } from "effect"
import { Line } from "./WireString.js"

export interface PageRequest {
  readonly limit: number
  /** The position after which the page starts: the `next_cursor` of the previous page, decoded. */
  readonly cursor?: string | undefined
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  /** The position of the last item, when another page follows (sent to clients through `Cursor`). */
  readonly next_cursor: string | null
}

/** Repositories fetch `limit + 1` rows; the extra row only tells that another page exists. */
export const fromRows = <A extends { readonly id: string }>(rows: ReadonlyArray<A>, limit: number): Page<A> =>
  rows.length > limit
    ? { data: rows.slice(0, limit), next_cursor: rows[limit - 1]!.id }
    : { data: rows, next_cursor: null }

/** Marks what the codec wrote, and its version. */
const tag = "huddle.cursor.1:"

const encodeCursor = (position: string): string => Encoding.encodeBase64Url(`${tag}${position}`)

/** The position a wire cursor holds, if the codec wrote it: the same string encodes to it exactly. */
const decodeCursor = (wire: string): string | undefined => {
  const text = Either.getOrUndefined(Encoding.decodeBase64UrlString(wire))
  if (text === undefined || !text.startsWith(tag)) return undefined
  const position = text.slice(tag.length)
  // Re-encoding refuses every other spelling (padding, stray bits, bytes that were not UTF-8).
  // No position holds a NUL, and the database refuses text with one.
  return position.length > 0 && !position.includes("\u0000") && encodeCursor(position) === wire ? position : undefined
}

/**
 * The one codec of every list's cursor: a position (an id, or a member's email) goes out as an
 * opaque string, and only a string it produced comes back in; anything else is refused, never
 * read as "no more items".
 */
export const Cursor = Schema.transformOrFail(
  Line.pipe(Schema.maxLength(512)).annotations({ description: "The `next_cursor` of the previous page" }),
  Schema.String,
  {
    strict: true,
    decode: (wire, _, ast) => {
      const position = decodeCursor(wire)
      return position === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, wire, "must be the next_cursor of a previous page"))
        : ParseResult.succeed(position)
    },
    encode: (position) => ParseResult.succeed(encodeCursor(position))
  }
).annotations({ message: () => ({ message: "must be the next_cursor of a previous page", override: true }) })
