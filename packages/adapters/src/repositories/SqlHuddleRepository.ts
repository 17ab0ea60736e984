import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { HuddleMessage, HuddleSession } from "@huddle/domain/huddle/Huddle"
import { HuddleRepository } from "@huddle/domain/huddle/HuddleRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { Int8, OptionalJsonb, pageFields, tableRow, Timestamp } from "./Rows.js"

const sessionColumns = { created_at: Timestamp, updated_at: Timestamp }

/** A row of `huddle_sessions`. */
const SessionRow = tableRow(HuddleSession, sessionColumns)

/**
 * A row of `huddle_messages`, as the session's read returns it: one jsonb value (its timestamp an
 * ISO string there, as the class reads it), its passages under the class's name `references`
 * (the column is `refs`).
 */
const MessageRow = tableRow(HuddleMessage, { credits_charged: Int8, consensus: OptionalJsonb(ConsensusReport) })

/**
 * The session's read: every row holds the session, and one of its last messages (NULL when it has
 * none). The session is decoded from the first row only.
 */
const decodeSession = Schema.decodeUnknown(SessionRow)
const decodeMessages = Schema.decodeUnknown(Schema.Array(Schema.Struct({ message: Schema.NullOr(MessageRow) })))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`id, title, org_id, workspace_id, created_at, updated_at`

  // One read: the session and its last messages (none when it is not this user's).
  const findSession = (userId: string, id: string, limit: number) =>
    sql`SELECT s.id, s.title, s.org_id, s.workspace_id, s.created_at, s.updated_at, to_jsonb(m) AS message
        FROM huddle_sessions s
        LEFT JOIN LATERAL (
          SELECT id, role, content, mode, intent_id, models, usage, credits_charged, refs AS "references", consensus, created_at
          FROM huddle_messages WHERE session_id = s.id ORDER BY id DESC LIMIT ${limit}
        ) m ON true
        WHERE s.id = ${id} AND s.user_id = ${userId}
        ORDER BY m.id`
  const listSessions = SqlSchema.findAll({
    Request: Schema.Struct({ userId: Schema.String, personal: Schema.Boolean, orgIds: Schema.Array(Schema.String), ...pageFields }),
    Result: SessionRow,
    execute: ({ cursor, limit, orgIds, personal, userId }) =>
      sql`SELECT ${columns} FROM huddle_sessions WHERE user_id = ${userId}
          AND (${personal ? sql`org_id IS NULL` : sql`false`}${orgIds.length === 0 ? sql`` : sql` OR org_id IN ${sql.in(orgIds)}`})
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })
  const rename = SqlSchema.findOne({
    Request: Schema.Struct({ userId: Schema.String, id: Schema.String, title: Schema.String }),
    Result: SessionRow,
    execute: ({ id, title, userId }) =>
      sql`UPDATE huddle_sessions SET title = ${title}, updated_at = now()
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`
  })

  return HuddleRepository.of({
    findSession: (userId, id, limit) =>
      findSession(userId, id, limit).pipe(
        Effect.flatMap((rows) =>
          rows.length === 0 ? Effect.succeedNone : Effect.zipWith(decodeSession(rows[0]), decodeMessages(rows), (session, joined) =>
            Option.some({ session, messages: joined.flatMap((row) => row.message === null ? [] : [row.message]) }))
        ),
        Effect.orDie
      ),
    listSessions: (userId, { orgIds, personal }, { cursor, limit }) =>
      Effect.orDie(listSessions({ userId, personal, orgIds, cursor, limit })),
    renameSession: (userId, id, title) => Effect.orDie(rename({ userId, id, title })),
    // Whether a row went: nothing to decode.
    deleteSession: (userId, id) =>
      sql`DELETE FROM huddle_sessions WHERE id = ${id} AND user_id = ${userId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(HuddleRepository, make)
