/**
 * A huddle's messages as SQL writes them: the part of a statement that adds a message to a
 * session (or starts the session with it). Messages are written only with their intents
 * (`SqlIntentRepository`): a turn's question with the intent as it starts, its answer with the
 * intent as it ends, each in one statement (a turn's writes are few: decision 0009).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { HuddleMessage, type HuddleSession } from "@huddle/domain/huddle/Huddle"
import { Effect, Schema } from "effect"
import { toDate } from "./Rows.js"

const encodeMessage = Schema.encode(HuddleMessage)

/**
 * Common table expressions, to begin a statement with (`WITH …, <yours>`), that add `message` to
 * session `sessionId` and mark the session updated at the message's time; with `newSession`,
 * that create the session (owned by `userId`) with the message as its first. Foreign keys are
 * checked at the statement's end, when the session exists. `added_message` returns the message's
 * id if it was written (not into a session deleted meanwhile).
 */
export const addingMessage = (
  sql: SqlClient.SqlClient,
  sessionId: string,
  message: HuddleMessage,
  newSession?: { readonly session: HuddleSession; readonly userId: string }
): Effect.Effect<Statement.Fragment> =>
  Effect.map(Effect.orDie(encodeMessage(message)), (e) => {
    const at = toDate(message.created_at)
    const columns = sql`id, session_id, intent_id, role, content, mode, models, usage, credits_charged, refs, consensus, created_at`
    const values = sql`${e.id}, ${sessionId}, ${e.intent_id}, ${e.role}, ${e.content}, ${e.mode},
        ${JSON.stringify(e.models)}::jsonb, ${e.usage === null ? null : JSON.stringify(e.usage)}::jsonb,
        ${e.credits_charged}, ${JSON.stringify(e.references)}::jsonb,
        ${e.consensus === undefined ? null : JSON.stringify(e.consensus)}::jsonb, ${at}`
    if (newSession !== undefined) {
      const { session, userId } = newSession
      return sql`created_session AS (
                   INSERT INTO huddle_sessions (id, user_id, org_id, workspace_id, title, created_at, updated_at)
                   VALUES (${session.id}, ${userId}, ${session.org_id}, ${session.workspace_id}, ${session.title},
                           ${toDate(session.created_at)}, ${at})
                 ),
                 added_message AS (INSERT INTO huddle_messages (${columns}) VALUES (${values}) RETURNING id)`
    }
    // Only into a session that is still there: its owner may delete it while a turn runs (the
    // intent goes with it). The message follows the session's update, not a read: an update waits
    // for a delete in progress and then finds no row, where a read would see the statement's
    // snapshot and the message would fail its foreign key.
    return sql`touched_session AS (UPDATE huddle_sessions SET updated_at = ${at} WHERE id = ${sessionId} RETURNING id),
               added_message AS (INSERT INTO huddle_messages (${columns}) SELECT ${values} FROM touched_session RETURNING id)`
  })
