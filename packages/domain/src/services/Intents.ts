/**
 * Intents by id: submit, read, list, and the review decisions. An intent awaiting review may be
 * approved or rejected by the user who submitted it or by an admin of its organization, once.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Conflict, type Forbidden, NotFound } from "../Errors.js"
import { type Intent, type IntentStatus, withoutPrompt } from "../Intent.js"
import { fromRows, type Page, type PageRequest } from "../Page.js"
import type { Principal } from "../Principal.js"
import { IntentRepository } from "../ports/IntentRepository.js"
import { MembershipRepository } from "../ports/MembershipRepository.js"
import { Huddles } from "./Huddles.js"
import { type Emit, IntentPipeline, type Outcome, type PipelineError, type Submission } from "./IntentPipeline.js"

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
  const pipeline = yield* IntentPipeline
  const huddles = yield* Huddles

  /** The intent, if the principal submitted it or administers its org. */
  const visible = (principal: Principal, id: string) =>
    Effect.gen(function*() {
      const found = yield* repo.find(id)
      if (Option.isNone(found)) return yield* intentNotFound
      const { intent, userId } = found.value
      if (userId === principal.user.id) return intent
      if (intent.org_id !== null && (principal.bound_org_id === null || principal.bound_org_id === intent.org_id)) {
        const role = yield* memberships.roleOf(principal.user.id, intent.org_id)
        if (Option.getOrUndefined(role) === "admin") return intent
      }
      return yield* intentNotFound
    })

  const decide = (principal: Principal, id: string, to: "executing" | "rejected") =>
    Effect.gen(function*() {
      const intent = yield* visible(principal, id)
      const moved = yield* repo.transition(id, "awaiting_review", to, principal.user.id)
      if (!moved) {
        return yield* new Conflict({ message: `The intent is ${intent.status}, not awaiting review` })
      }
      return intent
    })

  const approve: Service["approve"] = (principal, id, emit) =>
    Effect.gen(function*() {
      const intent = yield* decide(principal, id, "executing")
      const submitter = yield* repo.find(id).pipe(Effect.map(Option.getOrThrow))
      // Credits are reserved for the submitter, as if they had run it themselves.
      const outcome = yield* pipeline.execute(intent, submitter.userId, emit)
      yield* huddles.recordApproved(outcome.intent)
      return outcome
    })

  const publicOutcome = (outcome: Outcome): Outcome => ({ ...outcome, intent: withoutPrompt(outcome.intent) })

  return Intents.of({
    submit: (submission, emit) => Effect.map(pipeline.submit(submission, emit), publicOutcome),
    get: (principal, id) => Effect.map(visible(principal, id), withoutPrompt),
    list: (principal, page) =>
      repo.listForUser(principal.user.id, page).pipe(
        Effect.map((rows) => fromRows(rows.map(withoutPrompt), page.limit))
      ),
    approve: (principal, id, emit) => Effect.map(approve(principal, id, emit), publicOutcome),
    reject: (principal, id) =>
      decide(principal, id, "rejected").pipe(
        Effect.zipRight(visible(principal, id)),
        Effect.map(withoutPrompt)
      )
  })
})

export const layer = Layer.effect(Intents, make)
