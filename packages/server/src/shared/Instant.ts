/**
 * An instant in a query string: ISO 8601, a date (`2026-01-01`) or a date and time
 * (`2026-01-01T10:30`, seconds and fractions optional), UTC unless an offset is given. Stricter
 * than `Schema.DateTimeUtc`, which takes whatever `Date` parses and rolls an impossible date
 * forward (`2026-02-30` was 2 March) and reads a time without an offset in the server's zone.
 */
import { DateTime, Option, ParseResult, Schema } from "effect"

const shape = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

const isLeap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
const daysIn = (year: number, month: number) => month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** The instant `text` names, if it is one (every field within its range). */
export const parse = (text: string): DateTime.Utc | undefined => {
  const m = shape.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour = 0, minute = 0, second = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((part) => part === undefined ? undefined : Number(part)) as Array<number>
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysIn(year!, month!)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const offset = m[8]
  if (offset !== undefined && !/^[Zz]$/.test(offset)) {
    const [h, mm] = [Number(offset.slice(1, 3)), Number(offset.slice(-2))]
    if (h > 23 || mm > 59) return undefined
  }
  // A date alone, or a time without an offset: UTC.
  const iso = m[4] === undefined ? `${text}T00:00:00Z` : offset === undefined ? `${text}Z` : text
  return Option.getOrUndefined(DateTime.make(iso.replace(/[ t]/, "T").replace(/z$/, "Z")))
}

export const Instant = (description: string) =>
  Schema.transformOrFail(Schema.String, Schema.DateTimeUtcFromSelf, {
    strict: true,
    decode: (text, _, ast) => {
      const instant = parse(text)
      return instant === undefined ? ParseResult.fail(new ParseResult.Type(ast, text)) : ParseResult.succeed(instant)
    },
    encode: (instant) => ParseResult.succeed(DateTime.formatIso(instant))
  }).annotations({ description, message: () => "must be an ISO 8601 date or time, e.g. 2026-01-01" })
