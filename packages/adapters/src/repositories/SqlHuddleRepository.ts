import * as SqlClient from "@effect/sql/SqlClient"
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

/** The session's own columns of a row that joins its messages (the rest are not the session's). */
const sessionOf = ({ created_at, id, org_id, title, updated_at, workspace_id }: SessionRow): SessionRow => ({
  id,
  title,
  org_id,
  workspace_id,
  created_at,
  updated_at
})

const decodeMessage = Schema.decodeUnknown(HuddleMessage)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sessionColumns = sql`id, title, org_id, workspace_id, created_at, updated_at`

  return HuddleRepository.of({
    // One read: the session and its last messages (none when it is not this user's).
    findSession: (userId, id, limit) =>
      sql<SessionRow & { readonly [K in keyof MessageRow as `m_${K}`]: MessageRow[K] | null }>`
        SELECT s.id, s.title, s.org_id, s.workspace_id, s.created_at, s.updated_at,
               m.id AS m_id, m.role AS m_role, m.content AS m_content, m.mode AS m_mode, m.intent_id AS m_intent_id,
               m.models AS m_models, m.usage AS m_usage, m.credits_charged AS m_credits_charged, m.refs AS m_refs,
               m.consensus AS m_consensus, m.created_at AS m_created_at
        FROM huddle_sessions s
        LEFT JOIN LATERAL (
          SELECT id, role, content, mode, intent_id, models, usage, credits_charged, refs, consensus, created_at
          FROM huddle_messages WHERE session_id = s.id ORDER BY id DESC LIMIT ${limit}
        ) m ON true
        WHERE s.id = ${id} AND s.user_id = ${userId}
        ORDER BY m.id`.pipe(
        Effect.flatMap((rows) => {
          const first = rows[0]
          if (first === undefined) return Effect.succeed(Option.none())
          return Effect.forEach(rows.filter((row) => row.m_id !== null), (row) =>
            decodeMessage({
              id: row.m_id,
              role: row.m_role,
              content: row.m_content,
              mode: row.m_mode,
              intent_id: row.m_intent_id,
              models: row.m_models,
              usage: row.m_usage,
              credits_charged: row.m_credits_charged,
              references: row.m_refs,
              ...(row.m_consensus === null || row.m_consensus === undefined ? {} : { consensus: row.m_consensus }),
              created_at: row.m_created_at!.toISOString()
            })).pipe(Effect.map((messages) => Option.some({ session: sessionFromRow(sessionOf(first)), messages })))
        }),
        Effect.orDie
      ),
    listSessions: (userId, { orgIds, personal }, { cursor, limit }) =>
      sql<SessionRow>`SELECT ${sessionColumns} FROM huddle_sessions WHERE user_id = ${userId}
                      AND (${personal ? sql`org_id IS NULL` : sql`false`}${orgIds.length === 0 ? sql`` : sql` OR org_id IN ${sql.in(orgIds)}`})
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
      )
  })
})

export const layer = Layer.effect(HuddleRepository, make)
