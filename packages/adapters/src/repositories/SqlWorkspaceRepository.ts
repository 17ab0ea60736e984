import * as SqlClient from "@effect/sql/SqlClient"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import { Workspace } from "@huddle/domain/accounts/Workspace"
import { Effect, Layer, Option } from "effect"
import { toDate, utc } from "./Rows.js"

interface WorkspaceRow {
  readonly id: string
  readonly owner_id: string | null
  readonly org_id: string | null
  readonly name: string
  readonly personal: boolean
  readonly created_at: Date
}

const fromRow = (row: WorkspaceRow) =>
  new Workspace({ ...row, created_at: utc(row.created_at) }, { disableValidation: true })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`id, owner_id, org_id, name, personal, created_at`

  const findPersonal = (ownerId: string) =>
    sql<WorkspaceRow>`SELECT ${columns} FROM workspaces WHERE owner_id = ${ownerId} AND personal`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
      Effect.orDie
    )

  /** Workspaces owned by `ownerId` (none when null) or of `orgIds`; none at all when neither (`sql.or` of nothing is true). */
  const placeOf = (ownerId: string | null, orgIds: ReadonlyArray<string>) => {
    const parts = [
      ...(ownerId === null ? [] : [sql`owner_id = ${ownerId}`]),
      ...(orgIds.length === 0 ? [] : [sql`org_id IN ${sql.in(orgIds)}`])
    ]
    return parts.length === 0 ? sql`FALSE` : sql.or(parts)
  }

  return WorkspaceRepository.of({
    findById: (id) =>
      sql<WorkspaceRow>`SELECT ${columns} FROM workspaces WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
        Effect.orDie
      ),
    findPersonal,
    ensurePersonal: (candidate) =>
      Effect.gen(function*() {
        // The unique partial index (one personal workspace per owner) settles concurrent calls.
        yield* sql`INSERT INTO workspaces (id, owner_id, name, personal, created_at)
                   VALUES (${candidate.id}, ${candidate.owner_id}, ${candidate.name}, true, ${toDate(candidate.created_at)})
                   ON CONFLICT (owner_id) WHERE personal DO NOTHING`.pipe(Effect.orDie)
        const found = yield* findPersonal(candidate.owner_id ?? "")
        return yield* Option.match(found, {
          onNone: () => Effect.dieMessage(`no personal workspace for ${candidate.owner_id} after inserting one`),
          onSome: Effect.succeed
        })
      }),
    // The unique index on (org_id, lower(name)) refuses a second workspace of that name.
    createForOrg: (workspace) =>
      sql`INSERT INTO workspaces (id, org_id, name, personal, created_at)
          VALUES (${workspace.id}, ${workspace.org_id}, ${workspace.name}, false, ${toDate(workspace.created_at)})
          ON CONFLICT DO NOTHING RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    delete: (id) =>
      sql`DELETE FROM workspaces WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    list: ({ orgIds, ownerId }, { cursor, limit }) =>
      sql<WorkspaceRow>`
        SELECT ${columns} FROM workspaces
        WHERE ${placeOf(ownerId, orgIds)}
          ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
        ORDER BY id DESC LIMIT ${limit + 1}`.pipe(
        Effect.map((rows) => rows.map(fromRow)),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(WorkspaceRepository, make)
