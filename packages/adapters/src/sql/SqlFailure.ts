/**
 * What a storage failure means for the caller: the database cannot serve right now (an outage:
 * answer 503 and ask for a retry) or the statement was wrong (a bug: 500). One place decides it,
 * for both engines (`pg` against PostgreSQL, PGlite embedded).
 */
import { Predicate } from "effect"

export type Verdict = "unavailable" | "bug"

/**
 * SQLSTATEs that say "not now" rather than "not this": connection exceptions (08), insufficient
 * resources (53), shutdown or restart (57P01–57P04), a statement cancelled or timed out (57014),
 * serialization failure and deadlock (40001, 40P01), lock timeout (55P03), an I/O error (58030).
 * Every other state — integrity (23), data (22), syntax or access (42), … — is a bug: the code
 * should have prevented it, and retrying will not help.
 */
const unavailableStates: ReadonlyArray<RegExp> = [/^08/, /^53/, /^57P0[1-4]$/, /^57014$/, /^40001$/, /^40P01$/, /^55P03$/, /^58030$/]

/**
 * Failures of the driver itself, before or after the database answered: the socket (errno codes
 * such as ECONNREFUSED), a connection that closed or timed out (`pg`, `pg-pool`), or an embedded
 * database that is closing.
 */
const connectionCode = /^E[A-Z]+$/
const connectionMessage =
  /Connection terminated|timeout expired|Query read timeout|connection error and is not queryable|Client was closed|timeout exceeded when trying to connect|Cannot use a pool after calling end|Connection timed out|PGlite is clos/i

/** `sql-pg` says this when the pool cannot hand out a connection, whatever the driver's reason. */
const acquireMessage = /^(Failed to acquire connection|Connection error|PgClient: Failed to connect|PgClient: Connection timed out)/

const causeOf = (error: unknown): unknown => Predicate.hasProperty(error, "cause") ? error.cause : undefined

/** The errors from the failure down its `cause` chain (bounded: a cycle must not hang the edge). */
const chain = (error: unknown): ReadonlyArray<unknown> => {
  const links: Array<unknown> = []
  for (let link = error; link !== undefined && link !== null && links.length < 5; link = causeOf(link)) links.push(link)
  return links
}

const stringField = (error: unknown, field: string): string | undefined =>
  Predicate.hasProperty(error, field) && typeof error[field] === "string" ? error[field] : undefined

/**
 * SQLSTATE classes are two digits or F0, HV, P0, XX, and HC, Huddle's own (`HC001`, raised by
 * `huddle_cap_exceeded()`, migration 0007): an errno code such as EPIPE is none of them.
 */
const sqlStateShape = /^(?:[0-9]{2}|F0|HV|P0|XX|HC)[0-9A-Z]{3}$/

/** The SQLSTATE the database answered with, if it answered. */
export const sqlState = (error: unknown): string | undefined =>
  chain(error).map((link) => stringField(link, "code")).find((code) => code !== undefined && sqlStateShape.test(code))

/**
 * Whether a failure is storage being unavailable (`"unavailable"`) or anything else (`"bug"`).
 * An `SqlError` is classified by its SQLSTATE when the database answered, and otherwise by the
 * driver's connection failure; a migration that cannot run means the database is not ready.
 */
export const classify = (error: unknown): Verdict => {
  if (Predicate.isTagged(error, "MigrationError")) return "unavailable"
  if (!Predicate.isTagged(error, "SqlError")) return "bug"
  const state = sqlState(error)
  if (state !== undefined) return unavailableStates.some((pattern) => pattern.test(state)) ? "unavailable" : "bug"
  if (acquireMessage.test(stringField(error, "message") ?? "")) return "unavailable"
  return chain(error).slice(1).some((link) =>
      connectionCode.test(stringField(link, "code") ?? "") || connectionMessage.test(stringField(link, "message") ?? "")
    )
    ? "unavailable"
    : "bug"
}
