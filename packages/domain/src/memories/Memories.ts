/**
 * Memories: notes injected into the model input of later requests. A personal memory is its
 * author's alone; a workspace memory is read by whoever may use the workspace (its owner, or every
 * member of its org) and changed by its author (or, in an org workspace, an org admin); an org
 * memory is read by every member and written by admins. Whatever the caller may not read does not
 * exist for them. An API key bound to an org reaches that org's memories and its workspaces' only:
 * nothing personal (`reaches`).
 */
import { Context, DateTime, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { Forbidden, InvalidRequest, NotFound } from "../shared/Errors.js"
import { Ids } from "../shared/Ids.js"
import { Memory, MemoryContent, type MemoryScope } from "./Memory.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import type { Principal } from "../identity/Principal.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { MemoryRepository, type Selection } from "./MemoryRepository.js"
import * as WorkspaceAccess from "../accounts/WorkspaceAccess.js"
import { OrgAccess, personalContext, reaches } from "../orgs/OrgAccess.js"
import { traced } from "../observability/Traced.js"

export interface NewMemory {
  readonly content: string
  readonly scope: MemoryScope
  readonly orgId: string | null
  /** For a workspace memory; the caller's personal workspace when null. */
  readonly workspaceId: string | null
}

/** Narrows a listing; with none given it holds every memory the caller may read. */
export interface MemoryFilter {
  readonly scope: MemoryScope | null
  readonly orgId: string | null
  readonly workspaceId: string | null
}

export interface Service {
  readonly create: (principal: Principal, input: NewMemory) => Effect.Effect<Memory, InvalidRequest | NotFound | Forbidden>
  readonly list: (
    principal: Principal,
    filter: MemoryFilter,
    page: PageRequest
  ) => Effect.Effect<Page<Memory>, InvalidRequest | NotFound>
  readonly get: (principal: Principal, id: string) => Effect.Effect<Memory, NotFound>
  readonly update: (principal: Principal, id: string, content: string) => Effect.Effect<Memory, InvalidRequest | NotFound | Forbidden>
  readonly remove: (principal: Principal, id: string) => Effect.Effect<void, NotFound | Forbidden>
}

export class Memories extends Context.Tag("@huddle/domain/Memories")<Memories, Service>() {}

const memoryNotFound = new NotFound({ message: "Memory not found" })
const invalid = (message: string) => Effect.fail(new InvalidRequest({ message }))

/** The content as stored (trimmed), or why it is refused; the HTTP edge checks it too. */
export const validContent = (content: string): Effect.Effect<string, InvalidRequest> =>
  Schema.decodeUnknown(MemoryContent)(content).pipe(
    Effect.mapError((error) =>
      new InvalidRequest({ message: ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "content is invalid" })
    )
  )

/** Who may read and who may change a memory: its author, its workspace's users, its org's members and admins. */
const rightsOver = (workspaces: WorkspaceAccess.WorkspaceAccess, access: OrgAccess["Type"]) => {
  const readable = (principal: Principal, memory: Memory): Effect.Effect<void, NotFound> => {
    switch (memory.scope) {
      case "personal":
        return memory.author_id === principal.user.id && reaches(principal, null) ? Effect.void : Effect.fail(memoryNotFound)
      case "workspace":
        return workspaces.usable(principal, memory.workspace_id ?? "").pipe(Effect.asVoid, Effect.mapError(() => memoryNotFound))
      case "org":
        return access.member(principal, memory.org_id ?? "").pipe(Effect.asVoid, Effect.mapError(() => memoryNotFound))
    }
  }

  const writable = (principal: Principal, memory: Memory): Effect.Effect<void, NotFound | Forbidden> => {
    switch (memory.scope) {
      case "personal":
        return readable(principal, memory)
      case "workspace":
        // In a personal workspace the owner is the only author; in an org workspace every member
        // writes, and changes their own memories, while admins tend all of them.
        return workspaces.usable(principal, memory.workspace_id ?? "").pipe(
          Effect.mapError(() => memoryNotFound),
          Effect.filterOrFail(
            ({ role }) => memory.author_id === principal.user.id || role === "admin",
            () => new Forbidden({ message: "Only the author or an organization admin may change this memory" })
          ),
          Effect.asVoid
        )
      case "org":
        return access.admin(principal, memory.org_id ?? "").pipe(Effect.catchTag("NotFound", () => Effect.fail(memoryNotFound)))
    }
  }
  return { readable, writable }
}

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const memories = yield* MemoryRepository
  const workspaces = yield* WorkspaceAccess.make
  const memberships = yield* MembershipRepository
  const access = yield* OrgAccess

  const { readable, writable } = rightsOver(workspaces, access)

  const find = (id: string) =>
    memories.findById(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(memoryNotFound), onSome: Effect.succeed }))
    )

  /** Where a new memory goes: its org or workspace, once the combination and the caller's rights are checked. */
  const placement = (principal: Principal, input: NewMemory) =>
    Effect.gen(function*() {
      switch (input.scope) {
        case "personal": {
          if (input.orgId !== null || input.workspaceId !== null) {
            return yield* invalid("A personal memory takes neither org_id nor workspace_id")
          }
          yield* personalContext(principal)
          return { org_id: null, workspace_id: null }
        }
        case "workspace": {
          if (input.orgId !== null) return yield* invalid("A workspace memory takes no org_id; use scope \"org\" for an org memory")
          const workspace = input.workspaceId === null
            ? yield* workspaces.personal(principal)
            : (yield* workspaces.usable(principal, input.workspaceId)).workspace
          return { org_id: null, workspace_id: workspace.id }
        }
        case "org": {
          if (input.orgId === null) return yield* invalid("An org memory needs org_id")
          if (input.workspaceId !== null) return yield* invalid("An org memory takes no workspace_id")
          yield* access.admin(principal, input.orgId)
          return { org_id: input.orgId, workspace_id: null }
        }
      }
    })

  const create: Service["create"] = (principal, input) =>
    Effect.gen(function*() {
      const content = yield* validContent(input.content)
      const place = yield* placement(principal, input)
      const now = yield* DateTime.now
      const memory = new Memory({
        id: yield* ids.next("mem"),
        scope: input.scope,
        content,
        ...place,
        author_id: principal.user.id,
        created_at: now,
        updated_at: now
      })
      yield* memories.create(memory)
      return memory
    })

  /** The orgs whose memories the caller reads: their active memberships, or only the org their API key is bound to. */
  const readableOrgs = (principal: Principal) =>
    memberships.listForUser(principal.user.id).pipe(
      Effect.map((orgs) =>
        orgs.filter((org) => reaches(principal, org.id)).map((org) => org.id)
      )
    )

  const selection = (principal: Principal, filter: MemoryFilter): Effect.Effect<Selection, InvalidRequest | NotFound> =>
    Effect.gen(function*() {
      const userId = principal.user.id
      if (filter.orgId !== null && filter.workspaceId !== null) {
        return yield* invalid("org_id and workspace_id cannot be combined: a memory has at most one of them")
      }
      if (filter.orgId !== null) {
        if (filter.scope !== null && filter.scope !== "org") {
          return yield* invalid(`org_id selects org memories; it cannot be combined with scope "${filter.scope}"`)
        }
        yield* access.member(principal, filter.orgId)
        return { personalOf: null, workspaces: null, orgIds: [filter.orgId] }
      }
      if (filter.workspaceId !== null) {
        if (filter.scope !== null && filter.scope !== "workspace") {
          return yield* invalid(`workspace_id selects workspace memories; it cannot be combined with scope "${filter.scope}"`)
        }
        const { workspace } = yield* workspaces.usable(principal, filter.workspaceId)
        return {
          personalOf: null,
          workspaces: { ownerId: userId, orgIds: workspace.org_id === null ? [] : [workspace.org_id], workspaceId: workspace.id },
          orgIds: []
        }
      }
      const wants = (scope: MemoryScope) => filter.scope === null || filter.scope === scope
      const orgs = wants("org") || wants("workspace") ? yield* readableOrgs(principal) : []
      const personal = reaches(principal, null)
      return {
        personalOf: wants("personal") && personal ? userId : null,
        workspaces: wants("workspace") ? { ownerId: personal ? userId : null, orgIds: orgs, workspaceId: null } : null,
        orgIds: wants("org") ? orgs : []
      }
    })

  const list: Service["list"] = (principal, filter, page) =>
    selection(principal, filter).pipe(
      Effect.flatMap((selected) => memories.list(selected, page)),
      Effect.map((rows) => fromRows(rows, page.limit))
    )

  const get: Service["get"] = (principal, id) =>
    find(id).pipe(Effect.tap((memory) => readable(principal, memory)))

  const update: Service["update"] = (principal, id, content) =>
    Effect.gen(function*() {
      const next = yield* validContent(content)
      yield* writable(principal, yield* find(id))
      const updated = yield* memories.update(id, next, yield* DateTime.now)
      return yield* Option.match(updated, { onNone: () => Effect.fail(memoryNotFound), onSome: Effect.succeed })
    })

  const remove: Service["remove"] = (principal, id) =>
    Effect.gen(function*() {
      yield* writable(principal, yield* find(id))
      if (!(yield* memories.delete(id))) return yield* memoryNotFound
    })

  return Memories.of(traced("Memories", { create, list, get, update, remove }))
})

export const layer = Layer.effect(Memories, make)
