import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ConsensusReport } from "@huddle/domain/council/ConsensusReport"
import { GroundingReport } from "@huddle/domain/grounding/GroundingReport"
import { Intent, IntentStatus } from "@huddle/domain/huddle/Intent"
import { Instances } from "@huddle/domain/instances/Instances"
import { IntentRepository, type Question } from "@huddle/domain/huddle/IntentRepository"
import { Effect, Layer, Option, Predicate, Schema } from "effect"
import { addingMessage } from "./HuddleWrites.js"
import { Int8, OptionalJsonb, pageFields, tableRowWith, Timestamp, toDate } from "./Rows.js"

const encode = Schema.encode(Intent)
const json = (value: unknown) => value === null || value === undefined ? null : JSON.stringify(value)

/** The categories of review flags stored before a flag said what matched (a bare label). */
const labelledCategories: Readonly<Record<string, string>> = {
  "destructive operation": "destructive",
  credentials: "credentials",
  "production systems": "production",
  "money movement": "money_movement"
}

const withCurrentFlags = (plan: unknown): unknown =>
  Predicate.isRecord(plan) && Array.isArray(plan.flags)
    ? {
      ...plan,
      flags: plan.flags.map((flag: unknown) =>
        typeof flag === "string" ? { category: labelledCategories[flag] ?? flag, match: "" } : flag
      )
    }
    : plan

/** A stored plan, its flags as they are written now. */
const CurrentPlan = Schema.compose(
  Schema.transform(Schema.Unknown, Schema.Unknown, { strict: true, decode: withCurrentFlags, encode: (plan) => plan }),
  Intent.fields.plan,
  { strict: false }
)

const intentColumns = {
  plan: CurrentPlan,
  credits_charged: Int8,
  consensus: OptionalJsonb(ConsensusReport),
  grounding: OptionalJsonb(GroundingReport),
  created_at: Timestamp,
  updated_at: Timestamp
}

/** A row of `intents`, with who submitted it and in which workspace. */
const IntentRow = tableRowWith(Intent, intentColumns, { user_id: Schema.String, workspace_id: Schema.NullOr(Schema.String) })

/** A row of `intents` in an org's list, with its submitter's email. */
const ListedIntentRow = tableRowWith(Intent, intentColumns, { user_id: Schema.String, email: Schema.String })

const UserQuery = Schema.Struct({
  userId: Schema.String,
  status: Schema.optional(IntentStatus),
  orgId: Schema.optional(Schema.String),
  inOrgs: Schema.optional(Schema.Array(Schema.String)),
  ...pageFields
})

/** The session a huddle's message goes to: the intent's own (a message needs one). */
const sessionOf = (intent: Intent): Effect.Effect<string> =>
  intent.session_id === null ? Effect.dieMessage(`intent ${intent.id} has no session for a huddle message`) : Effect.succeed(intent.session_id)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The statement's part that writes a huddle's question (and its session, when new) in the intent's session. */
  const addingQuestion = (intent: Intent, userId: string, question: Question) =>
    Effect.flatMap(sessionOf(intent), (sessionId) =>
      question.newSession !== undefined && question.newSession.id !== sessionId
        ? Effect.dieMessage(`intent ${intent.id} is in session ${sessionId}, not in the new session ${question.newSession.id}`)
        : addingMessage(sql, sessionId, question.message, question.newSession === undefined ? undefined : { session: question.newSession, userId }))
  // Every write records the instance running the intent, so that a lost instance's intents can be failed.
  const instance = (yield* Instances).id
  const columns = sql`id, user_id, workspace_id, status, input, mode, org_id, session_id, settings, plan, output,
                      models, usage, credits_charged, consensus, grounding, error, created_at, updated_at`

  const find = SqlSchema.findOne({
    Request: Schema.String,
    Result: IntentRow,
    execute: (id) => sql`SELECT ${columns} FROM intents WHERE id = ${id}`
  })
  const listForUser = SqlSchema.findAll({
    Request: UserQuery,
    Result: IntentRow,
    execute: ({ cursor, inOrgs, limit, orgId, status, userId }) =>
      sql`SELECT ${columns} FROM intents WHERE user_id = ${userId}
          ${status === undefined ? sql`` : sql`AND status = ${status}`}
          ${orgId === undefined ? sql`` : sql`AND org_id = ${orgId}`}
          ${
        inOrgs === undefined
          ? sql``
          : inOrgs.length === 0
          ? sql`AND org_id IS NULL`
          : sql`AND (org_id IS NULL OR org_id IN ${sql.in(inOrgs)})`
      }
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })
  // Keyset on (org_id, id): intents_org_idx, or intents_org_review_id_idx for the review queue.
  const listForOrg = SqlSchema.findAll({
    Request: Schema.Struct({ orgId: Schema.String, status: Schema.optional(IntentStatus), ...pageFields }),
    Result: ListedIntentRow,
    execute: ({ cursor, limit, orgId, status }) =>
      sql`SELECT ${columns}, (SELECT email FROM users WHERE users.id = intents.user_id) AS email
          FROM intents WHERE org_id = ${orgId}
          ${status === undefined ? sql`` : sql`AND status = ${status}`}
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })

  return IntentRepository.of({
    // With a huddle's question: one statement for the session (when new), the message and the intent.
    insert: (intent, { userId, workspaceId }, question) =>
      Effect.gen(function*() {
        const e = yield* encode(intent)
        const adding = question === undefined ? undefined : yield* addingQuestion(intent, userId, question)
        yield* sql`${adding === undefined ? sql`` : sql`WITH ${adding}`}
                   INSERT INTO intents (id, user_id, org_id, session_id, workspace_id, input, mode, status, settings, plan,
                                        output, models, usage, credits_charged, consensus, grounding, error, created_at, updated_at, instance_id)
                   VALUES (${e.id}, ${userId}, ${e.org_id}, ${e.session_id}, ${workspaceId}, ${e.input}, ${e.mode},
                           ${e.status}, ${json(e.settings)}::jsonb, ${json(e.plan)}::jsonb, ${e.output},
                           ${json(e.models)}::jsonb, ${json(e.usage)}::jsonb, ${e.credits_charged},
                           ${json(e.consensus)}::jsonb, ${json(e.grounding)}::jsonb, ${json(e.error)}::jsonb, ${toDate(intent.created_at)}, ${toDate(intent.updated_at)}, ${instance})`
      }).pipe(Effect.orDie),
    // With the answer: one statement for the message, the session's time and the intent.
    update: (intent, reviewedBy, answer) =>
      Effect.gen(function*() {
        const e = yield* encode(intent)
        const adding = answer === undefined ? undefined : yield* addingMessage(sql, yield* sessionOf(intent), answer)
        const rows = yield* sql<{ readonly written: number | string }>`${adding === undefined ? sql`` : sql`WITH ${adding}`}
                   UPDATE intents SET status = ${e.status}, mode = ${e.mode}, settings = ${json(e.settings)}::jsonb, plan = ${json(e.plan)}::jsonb, output = ${e.output},
                     models = ${json(e.models)}::jsonb, usage = ${json(e.usage)}::jsonb,
                     credits_charged = ${e.credits_charged}, consensus = ${json(e.consensus)}::jsonb, grounding = ${json(e.grounding)}::jsonb, error = ${json(e.error)}::jsonb,
                     reviewed_by = COALESCE(${reviewedBy ?? null}, reviewed_by), updated_at = ${toDate(intent.updated_at)},
                     instance_id = ${instance}
                   WHERE id = ${e.id}
                   RETURNING ${adding === undefined ? sql`1` : sql`(SELECT count(*) FROM added_message)`} AS written`
        return rows.length > 0 && Number(rows[0]!.written) > 0
      }).pipe(Effect.orDie),
    transition: (id, from, to, reviewedBy) =>
      sql<{ id: string }>`UPDATE intents SET status = ${to}, reviewed_by = ${reviewedBy}, updated_at = now()
                          WHERE id = ${id} AND status = ${from} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    find: (id) =>
      find(id).pipe(
        Effect.map(Option.map((row) => ({ intent: row.value, userId: row.user_id, workspaceId: row.workspace_id }))),
        Effect.orDie
      ),
    failRunningOn: (instanceIds, error) =>
      instanceIds.length === 0
        ? Effect.succeed(0)
        : sql<{ id: string }>`UPDATE intents SET status = 'failed', error = ${JSON.stringify(error)}::jsonb, updated_at = now()
                              WHERE status IN ('received', 'planning', 'executing') AND instance_id IN ${sql.in(instanceIds)}
                              RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),
    // Over intents_running_idx, which holds only the running intents.
    failRunningBefore: (before, error) =>
      sql<{ id: string }>`UPDATE intents SET status = 'failed', error = ${JSON.stringify(error)}::jsonb, updated_at = now()
                          WHERE status IN ('received', 'planning', 'executing') AND updated_at < ${toDate(before)}
                          RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),
    listForUser: (userId, query) => listForUser({ userId, ...query }).pipe(Effect.map((rows) => rows.map((row) => row.value)), Effect.orDie),
    listForOrg: (orgId, query) =>
      listForOrg({ orgId, ...query }).pipe(
        Effect.map((rows) => rows.map((row) => ({ intent: row.value, submitter: { userId: row.user_id, email: row.email } }))),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(IntentRepository, make)
