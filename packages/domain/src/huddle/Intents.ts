/**
 * Intents by id: submit, read, list (the caller's own, or for an org's admins every member's, so
 * that they find what awaits their review), and the review decisions. An intent awaiting review may be
 * approved or rejected, once, by the user who submitted it or by an admin of its organization.
 *
 * Everything a submission checked is decided again when an intent is approved, by the same code:
 * who may act (membership and role now, the org a key is bound to), the settings and policies in
 * force (a plan they now forbid is re-planned, or refused), and, as the credits are reserved, that
 * the approver's credential and both memberships still stand.
 */
import { Context, Effect, Layer, Option, Stream } from "effect"
import { Conflict, type Forbidden, NotFound } from "../shared/Errors.js"
import { type Intent, type IntentStatus, listed, type ListedIntent, withoutPrompt } from "./Intent.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import type { Principal } from "../identity/Principal.js"
import { IntentRepository } from "./IntentRepository.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { approvedPayer, IntentPipeline, type Submission } from "./IntentPipeline.js"
import type { Outcome, PipelineError, PipelineEvent } from "./PipelineEvent.js"
import { isAdmin, OrgAccess, reaches } from "../orgs/OrgAccess.js"
import { traced } from "../observability/Traced.js"

export interface Service {
  /** Runs the pipeline (see `IntentPipeline`); the `Done` outcome's intent is shown without its prompt. */
  readonly submit: (submission: Submission) => Stream.Stream<PipelineEvent, PipelineError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<Intent, NotFound>
  /**
   * The caller's own intents; with `orgId`, the org's (every member's), for its admins only: a
   * member is refused (`Forbidden`), anyone else told the org does not exist (`NotFound`).
   */
  readonly list: (
    principal: Principal,
    page: PageRequest & { readonly status?: IntentStatus | undefined; readonly orgId?: string | undefined }
  ) => Effect.Effect<Page<ListedIntent>, NotFound | Forbidden>
  /** Executes an intent awaiting review, as a pipeline run (see `IntentPipeline.execute`). */
  readonly approve: (principal: Principal, id: string) => Stream.Stream<PipelineEvent, PipelineError | NotFound | Conflict | Forbidden>
  readonly reject: (principal: Principal, id: string) => Effect.Effect<Intent, NotFound | Conflict>
}

export class Intents extends Context.Tag("@huddle/domain/Intents")<Intents, Service>() {}

const intentNotFound = new NotFound({ message: "Intent not found" })

export const make = Effect.gen(function*() {
  const repo = yield* IntentRepository
  const memberships = yield* MembershipRepository
  const access = yield* OrgAccess
  const pipeline = yield* IntentPipeline

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
      if (!reaches(principal, intent.org_id)) return yield* intentNotFound
      if (intent.org_id === null) {
        if (userId === principal.user.id) return { intent, submitterId: userId }
        return yield* intentNotFound
      }
      const role = yield* access.member(principal, intent.org_id).pipe(Effect.mapError(() => intentNotFound))
      if (userId === principal.user.id || isAdmin(role)) return { intent, submitterId: userId }
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

  const approve = (principal: Principal, id: string) =>
    Stream.unwrap(Effect.gen(function*() {
      const { intent, submitterId } = yield* visible(principal, id)
      yield* awaitingReview(intent)
      // Credits are reserved for the submitter, as if they had run it themselves: they must still
      // belong to the org it runs in.
      if (intent.org_id !== null && Option.isNone(yield* memberships.roleOf(submitterId, intent.org_id))) {
        return yield* new Conflict({ message: "The submitter is no longer a member of the organization; the intent can only be rejected" })
      }
      const approved = yield* pipeline.replan(intent, submitterId)
      yield* moveFromReview(principal, id, "executing")
      return pipeline.execute(approved, approvedPayer(approved, submitterId, principal))
    }))

  const publicOutcome = (outcome: Outcome): Outcome => ({ ...outcome, intent: withoutPrompt(outcome.intent) })
  const publicEvents = <E>(events: Stream.Stream<PipelineEvent, E>) =>
    Stream.map(events, (event): PipelineEvent => event._tag === "Done" ? { _tag: "Done", outcome: publicOutcome(event.outcome) } : event)

  return Intents.of(traced("Intents", {
    submit: (submission) => publicEvents(pipeline.submit(submission)),
    get: (principal, id) => Effect.map(visible(principal, id), ({ intent }) => withoutPrompt(intent)),
    list: (principal, { orgId, ...page }) =>
      orgId === undefined
        // Only what `get` would show: an org's intents only while the caller is still in it.
        ? memberships.listForUser(principal.user.id).pipe(
          Effect.flatMap((orgs) =>
            repo.listForUser(principal.user.id, { ...page, orgId: principal.bound_org_id ?? undefined, inOrgs: orgs.map((org) => org.id) })
          ),
          Effect.map((rows) => fromRows(rows.map((intent) => listed(intent, { userId: principal.user.id, email: principal.user.email })), page.limit))
        )
        : access.admin(principal, orgId).pipe(
          Effect.zipRight(repo.listForOrg(orgId, page)),
          Effect.map((rows) => fromRows(rows.map(({ intent, submitter }) => listed(intent, submitter)), page.limit))
        ),
    approve: (principal, id) => publicEvents(approve(principal, id)),
    reject: (principal, id) =>
      Effect.gen(function*() {
        const { intent } = yield* visible(principal, id)
        yield* awaitingReview(intent)
        yield* moveFromReview(principal, id, "rejected")
        return withoutPrompt((yield* visible(principal, id)).intent)
      })
  }))
})

export const layer = Layer.effect(Intents, make)
