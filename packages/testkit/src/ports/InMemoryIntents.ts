/** Intents in memory, with their owner; every intent runs on the one instance `instanceId`. */
import { Intent, IntentError } from "@huddle/domain/huddle/Intent"
import { IntentRepository } from "@huddle/domain/huddle/IntentRepository"
import { DateTime, Effect, Layer, Option } from "effect"
import { emailOf, instanceId } from "./InMemoryPorts.js"

interface Row {
  readonly intent: Intent
  readonly userId: string
  readonly workspaceId: string | null
  readonly reviewedBy: string | null
}

// Huddle sessions are SQL's alone (there is no in-memory HuddleRepository).
const noSessions = "InMemoryIntents holds no huddle sessions: a turn's question and answer need SqlIntentRepository"

const running: ReadonlyArray<Intent["status"]> = ["received", "planning", "executing"]

export const layer = Layer.sync(IntentRepository, () => {
  const byId = new Map<string, Row>()

  const write = (id: string, change: (row: Row) => Row) => {
    const row = byId.get(id)
    if (row !== undefined) byId.set(id, change(row))
    return row !== undefined
  }

  return IntentRepository.of({
    insert: (intent, { userId, workspaceId }, question) =>
      question === undefined
        ? Effect.sync(() => void byId.set(intent.id, { intent, userId, workspaceId, reviewedBy: null }))
        : Effect.dieMessage(noSessions),
    update: (intent, reviewedBy, answer) =>
      answer === undefined
        ? Effect.sync(() => write(intent.id, (row) => ({ ...row, intent, reviewedBy: reviewedBy ?? row.reviewedBy })))
        : Effect.dieMessage(noSessions),
    transition: (id, from, to, reviewedBy) =>
      Effect.map(DateTime.now, (now) =>
        byId.get(id)?.intent.status === from &&
        write(id, (row) => ({
          ...row,
          intent: new Intent({ ...row.intent, status: to, updated_at: now }, { disableValidation: true }),
          reviewedBy
        }))),
    find: (id) => Effect.sync(() => Option.map(Option.fromNullable(byId.get(id)), ({ intent, userId, workspaceId }) => ({ intent, userId, workspaceId }))),
    failRunningOn: (instanceIds, error) =>
      Effect.map(DateTime.now, (now) => {
        if (!instanceIds.includes(instanceId)) return 0
        const failing = [...byId.values()].filter((row) => running.includes(row.intent.status))
        for (const row of failing) {
          write(row.intent.id, () => ({
            ...row,
            intent: new Intent({ ...row.intent, status: "failed", error: new IntentError(error), updated_at: now }, { disableValidation: true })
          }))
        }
        return failing.length
      }),
    failRunningBefore: (before, error) =>
      Effect.map(DateTime.now, (now) => {
        const failing = [...byId.values()].filter((row) => running.includes(row.intent.status) && DateTime.lessThan(row.intent.updated_at, before))
        for (const row of failing) {
          write(row.intent.id, () => ({
            ...row,
            intent: new Intent({ ...row.intent, status: "failed", error: new IntentError(error), updated_at: now }, { disableValidation: true })
          }))
        }
        return failing.length
      }),
    listForUser: (userId, { cursor, inOrgs, limit, orgId, status }) =>
      Effect.sync(() =>
        [...byId.values()]
          .filter((row) =>
            row.userId === userId &&
            (status === undefined || row.intent.status === status) &&
            (orgId === undefined || row.intent.org_id === orgId) &&
            (inOrgs === undefined || row.intent.org_id === null || inOrgs.includes(row.intent.org_id)) &&
            (cursor === undefined || row.intent.id < cursor)
          )
          .map((row) => row.intent)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .slice(0, limit + 1)
      ),
    listForOrg: (orgId, { cursor, limit, status }) =>
      Effect.sync(() =>
        [...byId.values()]
          .filter((row) =>
            row.intent.org_id === orgId &&
            (status === undefined || row.intent.status === status) &&
            (cursor === undefined || row.intent.id < cursor)
          )
          .sort((a, b) => (a.intent.id < b.intent.id ? 1 : -1))
          .slice(0, limit + 1)
          .map((row) => ({ intent: row.intent, submitter: { userId: row.userId, email: emailOf(row.userId) } }))
      )
  })
})
