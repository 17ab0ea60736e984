/**
 * Memories and workspaces in storage, on every engine of `TestDatabase.availableEngines()`, and
 * the memories `ContextAssembly` gathers from it. Every case makes its own users and orgs.
 */
import { randomBytes } from "node:crypto"
import { type ChangeFeed, Storage, UlidIds } from "@huddle/adapters"
import { Ids } from "@huddle/domain/shared/Ids"
import { Memory, type MemoryScope } from "@huddle/domain/memories/Memory"
import { Organization } from "@huddle/domain/orgs/Organization"
import * as Page from "@huddle/domain/shared/Page"
import { MemoryRepository } from "@huddle/domain/memories/MemoryRepository"
import { OrganizationRepository } from "@huddle/domain/orgs/OrganizationRepository"
import { UserRepository } from "@huddle/domain/accounts/UserRepository"
import { WorkspaceRepository } from "@huddle/domain/accounts/WorkspaceRepository"
import * as ContextAssembly from "@huddle/domain/memories/ContextAssembly"
import { Email, User, UserId } from "@huddle/domain/identity/User"
import { Workspace } from "@huddle/domain/accounts/Workspace"
import { TestDatabase } from "@huddle/testkit"
import { addEqualityTesters, describe, expect, layer } from "@effect/vitest"
import type { SqlClient } from "@effect/sql"
import { DateTime, Effect, Layer, Option } from "effect"

addEqualityTesters()

const storageOver = <E>(database: Layer.Layer<SqlClient.SqlClient | ChangeFeed.ChangeFeed, E>) =>
  ContextAssembly.layer.pipe(
    Layer.provideMerge(Storage.layer),
    Layer.provideMerge(UlidIds.layer),
    Layer.provideMerge(database)
  )

const unique = (label: string) => `${label}-${randomBytes(5).toString("hex")}`
const at = (iso: string) => DateTime.unsafeMake(iso)

const createdUser = (label = "user") =>
  Effect.gen(function*() {
    const user = new User({
      id: UserId.make(yield* (yield* Ids).next("usr")),
      email: Email.make(`${unique(label)}@example.com`),
      created_at: at("2025-03-01T10:00:00.123Z")
    })
    yield* (yield* UserRepository).create(user, "hash")
    return user
  })

const createdOrg = (admin: User) =>
  Effect.gen(function*() {
    const id = yield* (yield* Ids).next("org")
    const org = new Organization({ id, name: "Acme", slug: unique("acme"), created_at: at("2025-03-01T10:00:00.000Z") })
    yield* (yield* OrganizationRepository).create(org, { userId: admin.id, email: admin.email })
    return org
  })

const personalWorkspace = (owner: User) =>
  Effect.gen(function*() {
    return yield* (yield* WorkspaceRepository).ensurePersonal(
      new Workspace({
        id: yield* (yield* Ids).next("wsp"),
        owner_id: owner.id,
        org_id: null,
        name: "Personal",
        personal: true,
        created_at: at("2025-03-02T10:00:00.000Z")
      })
    )
  })

const stored = (
  author: User,
  scope: MemoryScope,
  content: string,
  place: { readonly org_id?: string; readonly workspace_id?: string } = {}
) =>
  Effect.gen(function*() {
    const memory = new Memory({
      id: yield* (yield* Ids).next("mem"),
      scope,
      content,
      org_id: place.org_id ?? null,
      workspace_id: place.workspace_id ?? null,
      author_id: author.id,
      created_at: at("2025-03-03T10:00:00.456Z"),
      updated_at: at("2025-03-03T10:00:00.456Z")
    })
    yield* (yield* MemoryRepository).create(memory)
    return memory
  })

const idsOf = (memories: ReadonlyArray<{ readonly id: string }>) => memories.map((memory) => memory.id)

for (const engine of TestDatabase.availableEngines()) {
  layer(storageOver(TestDatabase.layer(engine)), { excludeTestServices: true })(`memories in storage on ${engine}`, (it) => {
    describe("WorkspaceRepository", () => {
      it.effect("keeps one personal workspace per user, even under concurrent creation", () =>
        Effect.gen(function*() {
          const workspaces = yield* WorkspaceRepository
          const owner = yield* createdUser("owner")
          expect(yield* workspaces.findPersonal(owner.id)).toEqual(Option.none())

          const made = yield* Effect.all(Array.from({ length: 8 }, () => personalWorkspace(owner)), { concurrency: "unbounded" })
          const first = made[0]!
          expect(made.every((workspace) => workspace.id === first.id)).toBe(true)
          expect(first).toMatchObject({ owner_id: owner.id, personal: true, name: "Personal" })
          expect(yield* workspaces.findPersonal(owner.id)).toEqual(Option.some(first))
          expect(yield* workspaces.findById(first.id)).toEqual(Option.some(first))
          expect(yield* personalWorkspace(owner)).toEqual(first)
          expect(yield* workspaces.findById("wsp_nope")).toEqual(Option.none())
        }))
    })

    describe("MemoryRepository", () => {
      it.effect("stores, updates and deletes a memory", () =>
        Effect.gen(function*() {
          const memories = yield* MemoryRepository
          const author = yield* createdUser()
          const memory = yield* stored(author, "personal", "Prefer tabs\nand short functions.")
          expect(yield* memories.findById(memory.id)).toEqual(Option.some(memory))

          const later = at("2025-03-04T08:00:00.789Z")
          const updated = yield* memories.update(memory.id, "Prefer spaces.", later)
          expect(updated).toEqual(Option.some(new Memory({ ...memory, content: "Prefer spaces.", updated_at: later })))
          expect(yield* memories.findById(memory.id)).toEqual(updated)

          expect(yield* memories.delete(memory.id)).toBe(true)
          expect(yield* memories.delete(memory.id)).toBe(false)
          expect(yield* memories.findById(memory.id)).toEqual(Option.none())
          expect(yield* memories.update(memory.id, "x", later)).toEqual(Option.none())
        }))

      it.effect("selects by author, workspace owner and organization, newest first, in pages", () =>
        Effect.gen(function*() {
          const memories = yield* MemoryRepository
          const user = yield* createdUser("user")
          const other = yield* createdUser("other")
          const org = yield* createdOrg(other)
          const otherOrg = yield* createdOrg(other)
          const mine = yield* personalWorkspace(user)
          const theirs = yield* personalWorkspace(other)

          const p1 = yield* stored(user, "personal", "p1")
          const w1 = yield* stored(user, "workspace", "w1", { workspace_id: mine.id })
          const o1 = yield* stored(other, "org", "o1", { org_id: org.id })
          const p2 = yield* stored(user, "personal", "p2")
          yield* stored(other, "personal", "their personal")
          yield* stored(other, "workspace", "their workspace", { workspace_id: theirs.id })
          yield* stored(other, "org", "other org", { org_id: otherOrg.id })

          const everything = { personalOf: user.id, workspaces: { ownerId: user.id, orgIds: [], workspaceId: null }, orgIds: [org.id] }
          expect(idsOf(yield* memories.list(everything, { limit: 50 }))).toEqual(idsOf([p2, o1, w1, p1]))
          expect(idsOf(yield* memories.listAll(everything))).toEqual(idsOf([p1, w1, o1, p2]))
          expect(idsOf(yield* memories.listAll({ personalOf: user.id, workspaces: null, orgIds: [] }))).toEqual(idsOf([p1, p2]))
          expect(idsOf(yield* memories.listAll({ personalOf: null, workspaces: null, orgIds: [org.id] }))).toEqual(idsOf([o1]))
          expect(idsOf(yield* memories.listAll({ personalOf: null, workspaces: { ownerId: user.id, orgIds: [], workspaceId: mine.id }, orgIds: [] })))
            .toEqual(idsOf([w1]))
          // A workspace is selected only through its owner.
          expect(yield* memories.listAll({ personalOf: null, workspaces: { ownerId: user.id, orgIds: [], workspaceId: theirs.id }, orgIds: [] }))
            .toEqual([])
          expect(yield* memories.listAll({ personalOf: null, workspaces: null, orgIds: [] })).toEqual([])
          // An org's workspace is selected through its org, and only so.
          const shared = new Workspace({
            id: yield* (yield* Ids).next("wsp"),
            owner_id: null,
            org_id: org.id,
            name: unique("shared"),
            personal: false,
            created_at: at("2025-03-03T10:00:00.000Z")
          })
          expect(yield* (yield* WorkspaceRepository).createForOrg(shared)).toBe(true)
          expect(yield* (yield* WorkspaceRepository).createForOrg(new Workspace({ ...shared, id: yield* (yield* Ids).next("wsp"), name: shared.name.toUpperCase() })))
            .toBe(false)
          const ws1 = yield* stored(other, "workspace", "ws1", { workspace_id: shared.id })
          expect(idsOf(yield* memories.listAll({ personalOf: null, workspaces: { ownerId: user.id, orgIds: [org.id], workspaceId: null }, orgIds: [] })))
            .toEqual(idsOf([w1, ws1]))
          expect(idsOf(yield* memories.listAll({ personalOf: null, workspaces: { ownerId: user.id, orgIds: [org.id], workspaceId: shared.id }, orgIds: [] })))
            .toEqual(idsOf([ws1]))
          expect(yield* memories.listAll({ personalOf: null, workspaces: { ownerId: user.id, orgIds: [otherOrg.id], workspaceId: shared.id }, orgIds: [] }))
            .toEqual([])
          expect(yield* (yield* WorkspaceRepository).delete(shared.id)).toBe(true)
          expect(yield* memories.findById(ws1.id)).toEqual(Option.none())
          expect(yield* memories.list({ personalOf: null, workspaces: null, orgIds: [] }, { limit: 5 })).toEqual([])

          const first = Page.fromRows(yield* memories.list(everything, { limit: 3 }), 3)
          expect(idsOf(first.data)).toEqual(idsOf([p2, o1, w1]))
          expect(first.next_cursor).toBe(w1.id)
          const second = Page.fromRows(yield* memories.list(everything, { limit: 3, cursor: w1.id }), 3)
          expect(second).toEqual({ data: [p1], next_cursor: null })
        }))

      it.effect("the database refuses a memory whose scope and place disagree", () =>
        Effect.gen(function*() {
          const author = yield* createdUser()
          const org = yield* createdOrg(author)
          const refused = yield* Effect.exit(stored(author, "personal", "misplaced", { org_id: org.id }))
          expect(refused._tag).toBe("Failure")
          const orphan = yield* Effect.exit(stored(author, "org", "no org"))
          expect(orphan._tag).toBe("Failure")
        }))

      it.effect("an organization's memories go with it", () =>
        Effect.gen(function*() {
          const memories = yield* MemoryRepository
          const admin = yield* createdUser("admin")
          const org = yield* createdOrg(admin)
          const orgMemory = yield* stored(admin, "org", "shared", { org_id: org.id })
          const personal = yield* stored(admin, "personal", "kept")
          yield* (yield* OrganizationRepository).delete(org.id)
          expect(yield* memories.findById(orgMemory.id)).toEqual(Option.none())
          expect(yield* memories.findById(personal.id)).toEqual(Option.some(personal))
        }))
    })

    describe("ContextAssembly.memoriesFor", () => {
      it.effect("gathers the org's (for members), the workspace's and the user's memories, in precedence order", () =>
        Effect.gen(function*() {
          const assembly = yield* ContextAssembly.ContextAssembly
          const user = yield* createdUser("user")
          const admin = yield* createdUser("admin")
          const org = yield* createdOrg(admin)
          yield* (yield* OrganizationRepository).invite({
            orgId: org.id,
            email: user.email,
            role: "member",
            invitedBy: admin.id,
            at: at("2025-03-02T00:00:00.000Z")
          })
          const personal = yield* stored(user, "personal", "Answer in French.")
          const workspace = yield* personalWorkspace(user)
          const inWorkspace = yield* stored(user, "workspace", "The repo uses pnpm.", { workspace_id: workspace.id })
          const orgMemory = yield* stored(admin, "org", "Ship on Tuesdays.", { org_id: org.id })
          const duplicate = yield* stored(user, "personal", "  ship ON   tuesdays. ")
          const otherWorkspace = yield* personalWorkspace(admin)
          yield* stored(admin, "workspace", "Not yours.", { workspace_id: otherWorkspace.id })

          const request = { userId: user.id, orgId: org.id, workspaceId: null, personal: true, budgetTokens: 1000 }
          // Not a member yet: the org's memories are left out (and so the personal copy stays).
          const before = yield* assembly.memoriesFor(request)
          expect(idsOf(before.memories)).toEqual(idsOf([inWorkspace, personal, duplicate]))

          yield* (yield* OrganizationRepository).activateInvitations(user.email, user.id, at("2025-03-02T01:00:00.000Z"))
          const after = yield* assembly.memoriesFor(request)
          expect(after).toEqual({
            memories: [
              { id: orgMemory.id, scope: "org", content: "Ship on Tuesdays." },
              { id: inWorkspace.id, scope: "workspace", content: "The repo uses pnpm." },
              { id: personal.id, scope: "personal", content: "Answer in French." }
            ],
            tokens: 5 + 5 + 5,
            dropped: 0
          })

          // Another's workspace contributes nothing; a small budget keeps the first ones.
          const foreign = yield* assembly.memoriesFor({ ...request, workspaceId: otherWorkspace.id })
          expect(idsOf(foreign.memories)).toEqual([orgMemory.id, personal.id])
          const tight = yield* assembly.memoriesFor({ ...request, budgetTokens: 10 })
          expect(tight).toMatchObject({ tokens: 10, dropped: 1 })
          expect(idsOf(tight.memories)).toEqual([orgMemory.id, inWorkspace.id])
          const personalOnly = yield* assembly.memoriesFor({ ...request, orgId: null })
          expect(idsOf(personalOnly.memories)).toEqual(idsOf(before.memories))
          // Without the personal context (a key bound to the org): the org's memories alone, not
          // the personal ones nor the personal workspace's, even when that workspace is named.
          expect(idsOf((yield* assembly.memoriesFor({ ...request, personal: false })).memories)).toEqual([orgMemory.id])
          expect(idsOf((yield* assembly.memoriesFor({ ...request, personal: false, workspaceId: workspace.id })).memories)).toEqual([orgMemory.id])
        }))

      it.effect("without a personal workspace, gathers personal memories only", () =>
        Effect.gen(function*() {
          const assembly = yield* ContextAssembly.ContextAssembly
          const user = yield* createdUser()
          const note = yield* stored(user, "personal", "Be brief.")
          const result = yield* assembly.memoriesFor({ userId: user.id, orgId: "org_nope", workspaceId: null, personal: true, budgetTokens: 100 })
          expect(result).toEqual({ memories: [{ id: note.id, scope: "personal", content: "Be brief." }], tokens: 3, dropped: 0 })
        }))
    })
  })
}
