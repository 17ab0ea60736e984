/**
 * Builds the model input of a request. Memories: the org's (when the user is a member), the
 * workspace's and the user's personal ones, without duplicates, in precedence order, within a
 * token budget. A request without its personal context (a key bound to an org) has neither the
 * personal memories nor the personal workspace's.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { MemoryScope } from "./Memory.js"
import { estimateTokens } from "../models/Model.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { MemoryRepository } from "./MemoryRepository.js"
import { WorkspaceRepository } from "../accounts/WorkspaceRepository.js"
import { traced } from "../observability/Traced.js"

export interface ContextMemory {
  readonly id: string
  readonly scope: MemoryScope
  readonly content: string
}

export interface AssembledMemories {
  /** Org memories first, then workspace, then personal; oldest first within a scope. */
  readonly memories: ReadonlyArray<ContextMemory>
  /** The estimated tokens of `memories`, never more than the budget. */
  readonly tokens: number
  /** Distinct memories left out because the budget was spent. */
  readonly dropped: number
}

export interface MemoriesRequest {
  readonly userId: string
  /** The org context of the request; its memories count only when the user is an active member. */
  readonly orgId: string | null
  /** Whether the user is a member of `orgId`, when the caller knows (a request's scope); read otherwise. */
  readonly member?: boolean | undefined
  /** A workspace the user may use (their own, or one of an org they belong to); the personal one when null (and `personal`). */
  readonly workspaceId: string | null
  /** Whether the user's personal context counts (`RequestScope.personal`): false for a key bound to an org. */
  readonly personal: boolean
  readonly budgetTokens: number
}

export interface Service {
  readonly memoriesFor: (request: MemoriesRequest) => Effect.Effect<AssembledMemories>
}

export class ContextAssembly extends Context.Tag("@huddle/domain/ContextAssembly")<ContextAssembly, Service>() {}

/** How much of a model's context window the memories may take. */
export const memoryShare = 0.25

/** What an enforced low risk tolerance asks of every answer. */
export const conservativeInstruction =
  "Be conservative: prefer safe, well-established approaches, state risks and uncertainty, and never recommend irreversible actions without a warning."

/**
 * The instructions put ahead of a conversation: the conservative instruction when it applies,
 * then the memories; empty when there is neither.
 */
export const leadingInstructions = (
  options: { readonly conservative: boolean; readonly memories: ReadonlyArray<ContextMemory> }
): string => {
  const lines: Array<string> = []
  if (options.conservative) lines.push(conservativeInstruction)
  if (options.memories.length > 0) {
    lines.push("Remembered context for this team and user:")
    for (const memory of options.memories) lines.push(`- ${memory.content}`)
  }
  return lines.join("\n")
}

/** The token estimate used for budgeting, shared with the model call. */
export { estimateTokens }

/** The form under which two memories count as the same: trimmed, white space collapsed, lower case. */
export const normalise = (content: string): string => content.trim().replace(/\s+/g, " ").toLowerCase()

/** Lower comes first and wins over a duplicate. */
export const precedence: Readonly<Record<MemoryScope, number>> = { org: 0, workspace: 1, personal: 2 }

const compareStrings = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const byPrecedence = (a: ContextMemory, b: ContextMemory) =>
  precedence[a.scope] - precedence[b.scope] || compareStrings(a.id, b.id) || compareStrings(a.content, b.content)

/**
 * Orders the candidates (org, workspace, personal; by id within a scope), keeps the first copy
 * of each normalised content, and takes memories in that order until the next one would exceed
 * the budget. The result depends only on the set of candidates, not on their order.
 */
export const assemble = (candidates: ReadonlyArray<ContextMemory>, budgetTokens: number): AssembledMemories => {
  const seen = new Set<string>()
  const distinct = [...candidates].sort(byPrecedence).filter((memory) => {
    const key = normalise(memory.content)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const budget = Number.isNaN(budgetTokens) ? 0 : budgetTokens
  const memories: Array<ContextMemory> = []
  let tokens = 0
  for (const { content, id, scope } of distinct) {
    const cost = estimateTokens(content)
    // Stopping (rather than skipping to a smaller one) keeps every lower-precedence memory out
    // once a higher one did not fit.
    if (tokens + cost > budget) break
    memories.push({ id, scope, content })
    tokens += cost
  }
  return { memories, tokens, dropped: distinct.length - memories.length }
}

export const make = Effect.gen(function*() {
  const memories = yield* MemoryRepository
  const workspaces = yield* WorkspaceRepository
  const memberships = yield* MembershipRepository

  const isMember = (userId: string, orgId: string) => Effect.map(memberships.roleOf(userId, orgId), Option.isSome)

  const memoriesFor: Service["memoriesFor"] = ({ budgetTokens, member, orgId, personal, userId, workspaceId }) =>
    Effect.gen(function*() {
      const orgIds = orgId !== null && (member ?? (yield* isMember(userId, orgId))) ? [orgId] : []
      const workspace = workspaceId !== null
        ? yield* workspaces.findById(workspaceId)
        : personal
        ? yield* workspaces.findPersonal(userId)
        : Option.none()
      // Without the personal context, a personal workspace (even named) contributes nothing either.
      const ownerId = personal ? userId : null
      // The user's own, or one of an org they belong to: another's workspace contributes nothing.
      const workspaceOrg = Option.flatMap(workspace, (_) => Option.fromNullable(_.org_id))
      const workspaceOrgs = Option.isSome(workspaceOrg) && (yield* isMember(userId, workspaceOrg.value)) ? [workspaceOrg.value] : []
      const candidates = yield* memories.listAll({
        personalOf: ownerId,
        workspaces: Option.match(workspace, {
          onNone: () => null,
          onSome: (_) => ({ ownerId, orgIds: workspaceOrgs, workspaceId: _.id })
        }),
        orgIds
      })
      return assemble(candidates, budgetTokens)
    })

  return ContextAssembly.of(traced("ContextAssembly", { memoriesFor }, { leaves: ["memoriesFor"] }))
})

export const layer = Layer.effect(ContextAssembly, make)
