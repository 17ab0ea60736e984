import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import { Workspace } from "@huddle/domain/accounts/Workspace"
import { Effect, Layer, Option, Schema } from "effect"
import { pageFields, tableRow, Timestamp } from "./Rows.js"

/** A row of `workspaces`. */
const WorkspaceRow = tableRow(Workspace, { created_at: Timestamp })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`id, owner_id, org_id, name, personal, created_at`

  /** Workspaces owned by `ownerId` (none when null) or of `orgIds`; none at all when neither (`sql.or` of nothing is true). */
  const placeOf = (ownerId: string | null, orgIds: ReadonlyArray<string>) => {
    const parts = [
      ...(ownerId === null ? [] : [sql`owner_id = ${ownerId}`]),
      ...(orgIds.length === 0 ? [] : [sql`org_id IN ${sql.in(orgIds)}`])
    ]
    return parts.length === 0 ? sql`FALSE` : sql.or(parts)
  }

  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: WorkspaceRow,
    execute: (id) => sql`SELECT ${columns} FROM workspaces WHERE id = ${id}`
  })
  const findPersonal = SqlSchema.findOne({
    Request: Schema.String,
    Result: WorkspaceRow,
    execute: (ownerId) => sql`SELECT ${columns} FROM workspaces WHERE owner_id = ${ownerId} AND personal`
  })
  // The unique partial index (one personal workspace per owner) settles concurrent calls.
  const insertPersonal = SqlSchema.void({
    Request: WorkspaceRow,
    execute: (candidate) =>
      sql`INSERT INTO workspaces (id, owner_id, name, personal, created_at)
          VALUES (${candidate.id}, ${candidate.owner_id}, ${candidate.name}, true, ${candidate.created_at})
          ON CONFLICT (owner_id) WHERE personal DO NOTHING`
  })
  // The unique index on (org_id, lower(name)) refuses a second workspace of that name.
  const insertForOrg = SqlSchema.findAll({
    Request: WorkspaceRow,
    Result: Schema.Struct({ id: Schema.String }),
    execute: (workspace) =>
      sql`INSERT INTO workspaces (id, org_id, name, personal, created_at)
          VALUES (${workspace.id}, ${workspace.org_id}, ${workspace.name}, false, ${workspace.created_at})
          ON CONFLICT DO NOTHING RETURNING id`
  })
  const list = SqlSchema.findAll({
    Request: Schema.Struct({ ownerId: Schema.NullOr(Schema.String), orgIds: Schema.Array(Schema.String), ...pageFields }),
    Result: WorkspaceRow,
    execute: ({ cursor, limit, orgIds, ownerId }) =>
      sql`SELECT ${columns} FROM workspaces
          WHERE ${placeOf(ownerId, orgIds)}
            ${cursor === undefined ? sql`` : sql`AND id < ${cursor}`}
          ORDER BY id DESC LIMIT ${limit + 1}`
  })

  return WorkspaceRepository.of({
    findById: (id) => Effect.orDie(findById(id)),
    findPersonal: (ownerId) => Effect.orDie(findPersonal(ownerId)),
    ensurePersonal: (candidate) =>
      Effect.gen(function*() {
        yield* insertPersonal(candidate)
        const found = yield* findPersonal(candidate.owner_id ?? "")
        return yield* Option.match(found, {
          onNone: () => Effect.dieMessage(`no personal workspace for ${candidate.owner_id} after inserting one`),
          onSome: Effect.succeed
        })
      }).pipe(Effect.orDie),
    createForOrg: (workspace) => insertForOrg(workspace).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    // Whether a row went: nothing to decode.
    delete: (id) =>
      sql`DELETE FROM workspaces WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    list: ({ orgIds, ownerId }, { cursor, limit }) => Effect.orDie(list({ ownerId, orgIds, cursor, limit }))
  })
})

export const layer = Layer.effect(WorkspaceRepository, make)
