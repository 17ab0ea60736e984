/**
 * Rows as the repositories read and write them: the schemas of the column types both engines'
 * drivers return (decision 0049), and `tableRow`, which makes a domain class's schema read a row.
 * A repository's table schema is built once, at module level, from these.
 */
import * as Model from "@effect/sql/Model"
import type { SqlError } from "@effect/sql/SqlError"
import { Conflict } from "@huddle/domain/shared/Errors"
import { DateTime, Effect, type ParseResult, Schema } from "effect"
import { User } from "@huddle/domain/identity/User"

/**
 * A `timestamptz` column: a `Date` from both drivers (`pg` and PGlite), written as a `Date`. (A
 * timestamp inside a jsonb document is an ISO string: `Schema.DateTimeUtc` reads that.)
 */
export const Timestamp = Model.DateTimeFromDate

/**
 * A `bigint` column (credits, counts): a number on both engines as their clients are configured
 * (`PgliteClient.parsers`, `PostgresClient`), a numeric string where a sum makes it `numeric`.
 */
export const Int8 = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int()))

/**
 * A jsonb column: both drivers parse it; should one hand back the text instead (as the audit log
 * always allowed for), it is parsed here. Written with `Schema.parseJson` (a string, cast `::jsonb`).
 */
export const Jsonb = <A, I>(schema: Schema.Schema<A, I>) => Schema.Union(schema, Schema.parseJson(schema))

/** A jsonb column that holds an optional field of the domain: NULL when absent. */
export const OptionalJsonb = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { nullable: true })

/** The request of a page of a list (`PageRequest`): the position after which it starts, and its length. */
export const pageFields = { cursor: Schema.optional(Schema.String), limit: Schema.Number }

/** A domain class, as `tableRow` needs it: its fields, and its constructor. */
interface DomainClass<A, Fields extends Schema.Struct.Fields> extends Schema.Schema<A, any> {
  readonly fields: Fields
  new(props: Schema.Struct.Type<Fields>, options?: boolean): A
}

/**
 * The domain class `domain` read from a row: the row is checked by the class's own field schemas,
 * with `columns` in place of those the drivers return in another form (a `Date` for a
 * timestamp). Encoding gives the row's values to write (a `Date` again).
 */
export const tableRow = <A, Fields extends Schema.Struct.Fields, Columns extends Schema.Struct.Fields>(
  domain: DomainClass<A, Fields>,
  columns: Columns
) =>
  Schema.transform(Schema.Struct({ ...domain.fields, ...columns }), Schema.typeSchema(domain), {
    strict: false,
    // The row's struct has just checked every field: the constructor need not check them again.
    decode: (fields) => new domain(fields as Schema.Struct.Type<Fields>, true),
    encode: (value) => value
  })

/**
 * `tableRow(domain, columns)` with more of the row's columns beside the domain value (a joined
 * table's, or one the domain does not hold): `{ value, ...more }`. Read only.
 */
export const tableRowWith = <
  A,
  Fields extends Schema.Struct.Fields,
  Columns extends Schema.Struct.Fields,
  More extends Schema.Struct.Fields
>(domain: DomainClass<A, Fields>, columns: Columns, more: More) => {
  const own = Object.keys(domain.fields)
  const beside = Object.keys(more)
  return Schema.transform(
    Schema.Struct({ ...domain.fields, ...columns, ...more }),
    Schema.typeSchema(Schema.Struct({ value: domain, ...more })),
    {
      strict: false,
      decode: (row: Record<string, unknown>) => {
        const fields: Record<string, unknown> = {}
        for (const name of own) fields[name] = row[name]
        const result: Record<string, unknown> = { value: new domain(fields as Schema.Struct.Type<Fields>, true) }
        for (const name of beside) result[name] = row[name]
        return result
      },
      encode: ({ value, ...rest }: Record<string, unknown>) => ({ ...(value as object), ...rest })
    }
  )
}

/** A row of `users`. */
export const UserRow = tableRow(User, { created_at: Timestamp })

/** A row of `users` with more columns (of the row, or of a table it joins): `{ value: User, ...more }`. */
export const userRowWith = <More extends Schema.Struct.Fields>(more: More) => tableRowWith(User, { created_at: Timestamp }, more)

// For the statements still written by hand (a time to bind), and the rows still mapped by hand
// (the credit store's, the grounding store's).
export const utc = (value: Date | string): DateTime.Utc => DateTime.unsafeMake(value)
export const utcOrNull = (value: Date | string | null): DateTime.Utc | null => value === null ? null : utc(value)
export const toDate = (value: DateTime.Utc): Date => DateTime.toDateUtc(value)

/** Whether a SQL failure is a unique-constraint violation (SQLSTATE 23505) on either engine. */
export const isUniqueViolation = (error: { readonly cause?: unknown }): boolean => {
  const cause = error.cause as { code?: unknown } | null | undefined
  return typeof cause === "object" && cause !== null && cause.code === "23505"
}

/**
 * A write that a unique constraint may refuse: that refusal is the domain's `Conflict`; any other
 * SQL failure, or a value that would not encode, is a defect.
 */
export const conflictOnDuplicate = (message: string) => <A>(write: Effect.Effect<A, SqlError | ParseResult.ParseError>): Effect.Effect<A, Conflict> =>
  Effect.catchTags(write, {
    SqlError: (error) => isUniqueViolation(error) ? Effect.fail(new Conflict({ message })) : Effect.die(error),
    ParseError: Effect.die
  })
