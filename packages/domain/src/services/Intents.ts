/**
 * Intents by id: submit, read, list, and the review decisions. An intent awaiting review may be
 * approved or rejected, once, by the user who submitted it or by an admin of its organization.
 *
 * Everything a submission checked is decided again when an intent is approved, by the same code:
 * who may act (membership and role now, the org a key is bound to), the settings and policies in
 * force (a plan they now forbid is re-planned, or refused), and, as the credits are reserved, that
 * the approver's credential and both memberships still stand.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, type Forbidden, NotFound } from "../Errors.js"
import { type Intent, type IntentStatus, withoutPrompt } from "../Intent.js"
import { fromRows, type Page, type PageRequest } from "../Page.js"
import type { Principal } from "../Principal.js"
import { IntentRepository } from "../ports/IntentRepository.js"
import { MembershipRepository } from "../ports/MembershipRepository.js"
import { authorityOf } from "./Credits.js"
import { Huddles } from "./Huddles.js"
import { type Emit, IntentPipeline, type Outcome, type PipelineError, type Submission } from "./IntentPipeline.js"
import { OrgAccess } from "./OrgAccess.js"

export interface Service {
  readonly submit: (submission: Submission, emit: Emit) => Effect.Effect<Outcome, PipelineError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<Intent, NotFound>
  readonly list: (
    principal: Principal,
    page: PageRequest & { readonly status?: IntentStatus | undefined }
  ) => Effect.Effect<Page<Intent>>
  readonly approve: (principal: Principal, id: string, emit: Emit) => Effect.Effect<Outcome, PipelineError | NotFound | Conflict | Forbidden>
  readonly reject: (principal: Principal, id: string) => Effect.Effect<Intent, NotFound | Conflict>
}

export class Intents extends Context.Tag("@huddle/domain/Intents")<Intents, Service>() {}

const intentNotFound = new NotFound({ message: "Intent not found" })

export const make = Effect.gen(function*() {
  const repo = yield* IntentRepository
  const memberships = yield* MembershipRepository
  const access = yield* OrgAccess
  const pipeline = yield* IntentPipeline
  const huddles = yield* Huddles

  /**
   * The intent and its submitter, if the principal may see it now: a key bound to an org sees
   * only that org's intents; in an org, only its current members see anything (their own
   * intents, or every intent for an admin); personal intents only their submitter.
   */
  const visible = (principal: Principal, id: string) =>
    Effect.gen(function*() {
      const found = yield* repo.find(id)
      if (Option.isNone(found)) return yield* intentNotFound
      const { intent, userId } = found.value
      if (principal.bound_org_id !== null && intent.org_id !== principal.bound_org_id) return yield* intentNotFound
      if (intent.org_id === null) {
        if (userId === principal.user.id) return { intent, submitterId: userId }
        return yield* intentNotFound
      }
      const role = yield* access.member(principal, intent.org_id).pipe(Effect.mapError(() => intentNotFound))
      if (userId === principal.user.id || role === "admin") return { intent, submitterId: userId }
      return yield* intentNotFound
    })

  const awaitingReview = (intent: Intent) =>
    intent.status === "awaiting_review"
      ? Effect.void
      : Effect.fail(new Conflict({ message: `The intent is ${intent.status}, not awaiting review` }))

  /** The guard that makes a decision happen once, whoever decides at the same moment. */
  const moveFromReview = (principal: Principal, id: string, to: "executing" | "rejected") =>
    repo.transition(id, "awaiting_review", to, principal.user.id).pipe(
      Effect.filterOrFail((moved) => moved, () => new Conflict({ message: "The intent is no longer awaiting review" })),
      Effect.asVoid
    )

  const approve: Service["approve"] = (principal, id, emit) =>
    Effect.gen(function*() {
      const { intent, submitterId } = yield* visible(principal, id)
      yield* awaitingReview(intent)
      // Credits are reserved for the submitter, as if they had run it themselves: they must still
      // belong to the org it runs in.
      if (intent.org_id !== null && Option.isNone(yield* memberships.roleOf(submitterId, intent.org_id))) {
        return yield* new Conflict({ message: "The submitter is no longer a member of the organization; the intent can only be rejected" })
      }
      const current = yield* pipeline.replan(intent, submitterId)
      yield* moveFromReview(principal, id, "executing")
      const outcome = yield* pipeline.execute(current, submitterId, authorityOf(principal), emit)
      yield* huddles.recordApproved(outcome.intent)
      return outcome
    })

  const publicOutcome = (outcome: Outcome): Outcome => ({ ...outcome, intent: withoutPrompt(outcome.intent) })

  return Intents.of({
    submit: (submission, emit) => Effect.map(pipeline.submit(submission, emit), publicOutcome),
    get: (principal, id) => Effect.map(visible(principal, id), ({ intent }) => withoutPrompt(intent)),
    list: (principal, page) =>
      repo.listForUser(principal.user.id, { ...page, orgId: principal.bound_org_id ?? undefined }).pipe(
        Effect.map((rows) => fromRows(rows.map(withoutPrompt), page.limit))
      ),
    approve: (principal, id, emit) => Effect.map(approve(principal, id, emit), publicOutcome),
    reject: (principal, id) =>
      Effect.gen(function*() {
        const { intent } = yield* visible(principal, id)
        yield* awaitingReview(intent)
        yield* moveFromReview(principal, id, "rejected")
        return withoutPrompt((yield* visible(principal, id)).intent)
      })
  })
})

export const layer = Layer.effect(Intents, make)
