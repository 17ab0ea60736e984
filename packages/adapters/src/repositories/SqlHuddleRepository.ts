import { SqlClient } from "@effect/sql"
import { HuddleMessage, HuddleSession } from "@huddle/domain/huddle/Huddle"
import { HuddleRepository } from "@huddle/domain/huddle/HuddleRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { utc } from "./Rows.js"

interface SessionRow {
  readonly id: string
  readonly title: string
  readonly org_id: string | null
  readonly workspace_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

interface MessageRow {
  readonly id: string
  readonly role: string
  readonly content: string
  readonly mode: string | null
  readonly intent_id: string | null
  readonly models: unknown
  readonly usage: unknown
  readonly credits_charged: number
  readonly refs: unknown
  readonly consensus: unknown
  readonly created_at: Date
}

const sessionFromRow = (row: SessionRow) =>
  new HuddleSession({ ...row, created_at: utc(row.created_at), updated_at: utc(row.updated_at) }, { disableValidation: true })

const decodeMessage = Schema.decodeUnknown(HuddleMessage)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sessionColumns = sql`id, title, org_id, workspace_id, created_at, updated_at`

  return HuddleRepository.of({
    findSession: (userId, id) =>
      sql<SessionRow>`SELECT ${sessionColumns} FROM huddle_sessions WHERE id = ${id} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), sessionFromRow)),
        Effect.orDie
      ),
    listSessions: (userId, { cursor, limit }) =>
      sql<SessionRow>`SELECT ${sessionColumns} FROM huddle_sessions WHERE user_id = ${userId}
                      ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
                      ORDER BY id DESC LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) => rows.map(sessionFromRow)),
        Effect.orDie
      ),
    renameSession: (userId, id, title) =>
      sql<SessionRow>`UPDATE huddle_sessions SET title = ${title}, updated_at = now()
                      WHERE id = ${id} AND user_id = ${userId} RETURNING ${sessionColumns}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), sessionFromRow)),
        Effect.orDie
      ),
    deleteSession: (userId, id) =>
      sql<{ id: string }>`DELETE FROM huddle_sessions WHERE id = ${id} AND user_id = ${userId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    messages: (sessionId, limit) =>
      sql<MessageRow>`SELECT * FROM (
                        SELECT id, role, content, mode, intent_id, models, usage, credits_charged, refs, consensus, created_at
                        FROM huddle_messages WHERE session_id = ${sessionId} ORDER BY id DESC LIMIT ${limit}
                      ) recent ORDER BY id`.pipe(
        Effect.flatMap((rows) =>
          Effect.forEach(rows, (row) =>
            decodeMessage({
              id: row.id,
              role: row.role,
              content: row.content,
              mode: row.mode,
              intent_id: row.intent_id,
              models: row.models,
              usage: row.usage,
              credits_charged: row.credits_charged,
              references: row.refs,
              ...(row.consensus === null || row.consensus === undefined ? {} : { consensus: row.consensus }),
              created_at: row.created_at.toISOString()
            }))
        ),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(HuddleRepository, make)
