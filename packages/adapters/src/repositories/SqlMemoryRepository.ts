import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type { Fragment, Statement } from "@effect/sql/Statement"
import { Memory } from "@huddle/domain/memories/Memory"
import { MemoryRepository, type Selection } from "@huddle/domain/memories/MemoryRepository"
import { Effect, Layer, Option, Schema } from "effect"
import { tableRow, Timestamp } from "./Rows.js"

/** A row of `memories`. */
const MemoryRow = tableRow(Memory, { created_at: Timestamp, updated_at: Timestamp })

/** The rows of a selection's statement (assembled from fragments, so not a `SqlSchema` request). */
const decodeMemories = Schema.decodeUnknown(Schema.Array(MemoryRow))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`m.id, m.scope, m.content, m.org_id, m.workspace_id, m.author_id, m.created_at, m.updated_at`

  /** The WHERE condition of a selection; none when it selects nothing. */
  const condition = (selection: Selection) => {
    const parts: Array<Fragment> = []
    if (selection.personalOf !== null) {
      parts.push(sql`(m.scope = 'personal' AND m.author_id = ${selection.personalOf})`)
    }
    if (selection.workspaces !== null) {
      const { orgIds, ownerId, workspaceId } = selection.workspaces
      const places = [
        ...(ownerId === null ? [] : [sql`w.owner_id = ${ownerId}`]),
        ...(orgIds.length === 0 ? [] : [sql`w.org_id IN ${sql.in(orgIds)}`])
      ]
      // `sql.or` of nothing is true: no place selects no workspace memory.
      const place = places.length === 0 ? sql`FALSE` : sql.or(places)
      parts.push(sql`(m.scope = 'workspace' AND ${place}
                     ${workspaceId === null ? sql`` : sql`AND m.workspace_id = ${workspaceId}`})`)
    }
    if (selection.orgIds.length > 0) {
      parts.push(sql`(m.scope = 'org' AND m.org_id IN ${sql.in(selection.orgIds)})`)
    }
    return parts.length === 0 ? Option.none() : Option.some(sql.or(parts))
  }

  const select = (selection: Selection, query: (where: Fragment) => Statement<unknown>) =>
    Option.match(condition(selection), {
      onNone: () => Effect.succeed([]),
      onSome: (where) => query(where).pipe(Effect.flatMap(decodeMemories), Effect.orDie)
    })

  const insert = SqlSchema.void({
    Request: MemoryRow,
    execute: (memory) =>
      sql`INSERT INTO memories (id, scope, author_id, org_id, workspace_id, content, created_at, updated_at)
          VALUES (${memory.id}, ${memory.scope}, ${memory.author_id}, ${memory.org_id}, ${memory.workspace_id},
                  ${memory.content}, ${memory.created_at}, ${memory.updated_at})`
  })
  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: MemoryRow,
    execute: (id) => sql`SELECT ${columns} FROM memories m WHERE m.id = ${id}`
  })
  const update = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, content: Schema.String, at: Timestamp }),
    Result: MemoryRow,
    execute: ({ at, content, id }) =>
      sql`UPDATE memories m SET content = ${content}, updated_at = ${at} WHERE m.id = ${id} RETURNING ${columns}`
  })

  return MemoryRepository.of({
    create: (memory) => Effect.orDie(insert(memory)),
    findById: (id) => Effect.orDie(findById(id)),
    update: (id, content, at) => Effect.orDie(update({ id, content, at })),
    // Whether a row went: nothing to decode.
    delete: (id) =>
      sql`DELETE FROM memories WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    list: (selection, { cursor, limit }) =>
      select(selection, (where) =>
        sql`SELECT ${columns} FROM memories m LEFT JOIN workspaces w ON w.id = m.workspace_id
            WHERE ${where} ${cursor === undefined ? sql`` : sql`AND m.id < ${cursor}`}
            ORDER BY m.id DESC LIMIT ${limit + 1}`),
    listAll: (selection) =>
      select(selection, (where) =>
        sql`SELECT ${columns} FROM memories m LEFT JOIN workspaces w ON w.id = m.workspace_id
            WHERE ${where} ORDER BY m.id`)
  })
})

export const layer = Layer.effect(MemoryRepository, make)
