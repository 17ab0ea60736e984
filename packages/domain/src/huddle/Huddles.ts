/**
 * Huddle sessions: a conversation whose every message runs the intent pipeline. A session
 * belongs to the user who started it; each message may change mode.
 */
import { Context, DateTime, Effect, Layer, Option, Stream } from "effect"
import { NotFound } from "../shared/Errors.js"
import { HuddleMessage, HuddleReply, HuddleSession, HuddleSessionWithMessages } from "./Huddle.js"
import { Ids } from "../shared/Ids.js"
import { Usage } from "../models/Model.js"
import { fromRows, type Page, type PageRequest } from "../shared/Page.js"
import type { Preferences } from "../settings/Preferences.js"
import type { Principal } from "../identity/Principal.js"
import { HuddleRepository } from "./HuddleRepository.js"
import { lastOf } from "../shared/Streams.js"
import { IntentPipeline } from "./IntentPipeline.js"
import { referencesOf } from "./IntentRecords.js"
import type { Outcome, PipelineError, PipelineEvent } from "./PipelineEvent.js"
import { personalContext, type RequestScope, RequestScopes } from "../request/RequestScope.js"
import { traced } from "../observability/Traced.js"
import { MembershipRepository } from "../orgs/MembershipRepository.js"
import { OrgAccess, reaches } from "../orgs/OrgAccess.js"

export interface Ask {
  readonly input: string
  /** The settings the request names (mode, model tier), below enforced policies. */
  readonly request?: Preferences | undefined
}

/** A huddle turn as it happens: the pipeline's stages and tokens, then, last, the reply. */
export type HuddleEvent =
  | Exclude<PipelineEvent, { readonly _tag: "Done" }>
  | { readonly _tag: "Reply"; readonly reply: HuddleReply }

/** The reply a turn ended with (every turn that does not fail ends with one). */
export const replyOf = <E, R>(events: Stream.Stream<HuddleEvent, E, R>): Effect.Effect<HuddleReply, E, R> =>
  lastOf(events, (event) => event._tag === "Reply" ? event.reply : undefined, "A huddle turn")

export interface Service {
  /** Starts a session, in the request's scope, with its first message and answers it. */
  readonly start: (scope: RequestScope, ask: Ask) => Stream.Stream<HuddleEvent, PipelineError>
  /** Adds a message to a session the caller owns and answers it, in the session's org and workspace. */
  readonly reply: (principal: Principal, sessionId: string, ask: Ask) => Stream.Stream<HuddleEvent, PipelineError | NotFound>
  readonly list: (principal: Principal, page: PageRequest) => Effect.Effect<Page<HuddleSession>>
  readonly get: (principal: Principal, sessionId: string) => Effect.Effect<HuddleSessionWithMessages, NotFound>
  readonly rename: (principal: Principal, sessionId: string, title: string) => Effect.Effect<HuddleSession, NotFound>
  readonly remove: (principal: Principal, sessionId: string) => Effect.Effect<void, NotFound>
}

export class Huddles extends Context.Tag("@huddle/domain/Huddles")<Huddles, Service>() {}

const sessionNotFound = new NotFound({ message: "Session not found" })

const titleOf = (input: string) => {
  const line = input.trim().split("\n")[0] ?? ""
  return line.length > 80 ? `${line.slice(0, 77)}...` : line.length > 0 ? line : "Untitled huddle"
}

export const make = Effect.gen(function*() {
  const ids = yield* Ids
  const repo = yield* HuddleRepository
  const pipeline = yield* IntentPipeline
  const scopes = yield* RequestScopes
  const access = yield* OrgAccess
  const memberships = yield* MembershipRepository

  /**
   * Whether the caller may see a session of theirs: one of an org only while they are its member,
   * through a credential that reaches it (a key bound to another org does not); a personal one
   * through a credential that reaches the personal context (a key bound to an org does not), as
   * for intents.
   */
  const visible = (principal: Principal, session: HuddleSession): Effect.Effect<void, NotFound> =>
    session.org_id === null
      ? reaches(principal, null) ? Effect.void : Effect.fail(sessionNotFound)
      : access.member(principal, session.org_id).pipe(Effect.asVoid, Effect.mapError(() => sessionNotFound))

  /** The caller's session with its last `limit` messages, when they may still see it. */
  const owned = (principal: Principal, sessionId: string, limit: number) =>
    repo.findSession(principal.user.id, sessionId, limit).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(sessionNotFound), onSome: Effect.succeed })),
      Effect.tap(({ session }) => visible(principal, session))
    )

  // The answer was recorded in the session with the completed intent (`IntentRecords`).
  const replyTo = (session: HuddleSession, outcome: Outcome) => {
    const { intent } = outcome
    return new HuddleReply({
      session_id: session.id,
      message_id: outcome.answer?.id ?? null,
      intent_id: intent.id,
      status: intent.status === "completed" ? "completed" : "awaiting_review",
      mode: intent.mode,
      requested_mode: outcome.requestedMode,
      ...(intent.plan?.mode_reason === undefined ? {} : { mode_reason: intent.plan.mode_reason }),
      output: intent.output,
      references: referencesOf(intent),
      usage: intent.usage ?? new Usage({ input_tokens: 0, output_tokens: 0 }),
      credits_charged: intent.credits_charged,
      models: intent.models,
      policy: intent.settings,
      offline: outcome.offline,
      ...(outcome.offlineFallback === undefined ? {} : { offline_fallback: outcome.offlineFallback }),
      ...(intent.plan?.max_output_tokens_lowered_from === undefined
        ? {}
        : { max_tokens_lowered: { from: intent.plan.max_output_tokens_lowered_from, to: intent.plan.max_output_tokens } }),
      ...(intent.consensus === undefined ? {} : { consensus: intent.consensus }),
      ...(intent.grounding === undefined ? {} : { grounding: intent.grounding })
    })
  }

  /**
   * Answers `input` in `session`. The question (and, for a new session, the session) is written
   * with the intent, only once the pipeline accepts the request: a refused one leaves nothing
   * behind; the answer is written with the completed intent.
   */
  const ask = (
    scope: RequestScope,
    session: HuddleSession,
    earlier: ReadonlyArray<HuddleMessage>,
    input: Ask,
    /** Whether the session is new, to be written with its first message. */
    isNew: boolean
  ): Stream.Stream<HuddleEvent, PipelineError> =>
    Stream.unwrap(Effect.gen(function*() {
      const question = new HuddleMessage({
        id: yield* ids.next("msg"),
        role: "user",
        content: input.input,
        mode: input.request?.mode ?? null,
        intent_id: null,
        models: [],
        usage: null,
        credits_charged: 0,
        references: [],
        created_at: yield* DateTime.now
      })
      return pipeline.submit({
        scope,
        sessionId: session.id,
        input: input.input,
        request: input.request,
        history: earlier.filter((m) => m.content.length > 0).map((m) => ({ role: m.role, content: m.content })),
        question: { message: question, newSession: isNew ? session : undefined }
      }).pipe(
        Stream.map((event): HuddleEvent => event._tag === "Done" ? { _tag: "Reply", reply: replyTo(session, event.outcome) } : event)
      )
    }))

  const start: Service["start"] = (scope, input) =>
    Stream.unwrap(Effect.gen(function*() {
      const now = yield* DateTime.now
      const session = new HuddleSession({
        id: yield* ids.next("hud"),
        title: titleOf(input.input),
        org_id: scope.orgId,
        workspace_id: scope.workspaceId,
        created_at: now,
        updated_at: now
      })
      return ask(scope, session, [], input, true)
    }))

  const reply: Service["reply"] = (principal, sessionId, input) =>
    Stream.unwrap(Effect.gen(function*() {
      const { messages: earlier, session } = yield* owned(principal, sessionId, 40)
      // A personal session goes on in the personal context, never in the org a key is bound to.
      const scope = yield* scopes.resolve(principal, {
        ...(session.org_id === null ? { headerOrgId: personalContext } : { orgId: session.org_id }),
        workspaceId: session.workspace_id
      })
      return ask(scope, session, earlier, input, false)
    }))

  const list: Service["list"] = (principal, page) =>
    memberships.listForUser(principal.user.id).pipe(
      Effect.map((orgs) => orgs.filter((org) => reaches(principal, org.id)).map((org) => org.id)),
      Effect.flatMap((orgIds) => repo.listSessions(principal.user.id, { personal: reaches(principal, null), orgIds }, page)),
      Effect.map((rows) => fromRows(rows, page.limit))
    )

  const get: Service["get"] = (principal, sessionId) =>
    Effect.gen(function*() {
      const { messages, session } = yield* owned(principal, sessionId, 1000)
      return new HuddleSessionWithMessages({ ...session, messages })
    })

  const rename: Service["rename"] = (principal, sessionId, title) =>
    owned(principal, sessionId, 0).pipe(
      Effect.zipRight(repo.renameSession(principal.user.id, sessionId, title)),
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(sessionNotFound), onSome: Effect.succeed }))
    )

  const remove: Service["remove"] = (principal, sessionId) =>
    owned(principal, sessionId, 0).pipe(
      Effect.zipRight(repo.deleteSession(principal.user.id, sessionId)),
      Effect.flatMap((deleted) => deleted ? Effect.void : Effect.fail(sessionNotFound))
    )

  return Huddles.of(traced("Huddles", { start, reply, list, get, rename, remove }))
})

export const layer = Layer.effect(Huddles, make)
