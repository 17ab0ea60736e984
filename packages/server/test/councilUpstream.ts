/**
 * A fake OpenAI-compatible upstream that sits on a council: it reads each request's round from
 * its prompt (`Protocol.roundOf`) and answers in that round's form. Every participant proposes
 * and keeps the same position; the upstream model `dissenter` dissents at the ratification with
 * a claim of its own, the others endorse. Every call reports the same usage, so that a run's
 * charge is known from the number of its calls.
 */
import { type PromptRound, roundOf } from "@huddle/domain/council/Protocol"
import { FakeOpenAi } from "@huddle/testkit"

export const position = "Keep the ledger in PostgreSQL."
export const consensusText = "PostgreSQL gives the ledger transactions and row locks, and the team already runs it."
export const dissent = { claim: "Keep the ledger in SQLite for the first release.", rationale: "One file is simpler to operate at this size." }

/** What every call reports: 60 input and 12 output tokens. */
export const usagePerCall = { prompt_tokens: 60, completion_tokens: 12 } as const

const answers: Readonly<Record<PromptRound, (dissenting: boolean) => string>> = {
  proposals: () => `POSITION: ${position}\nIt has transactions, and we already operate it.`,
  position: () => `POSITION: ${position}`,
  critique: () => `CRITIQUE: The others agree and their reasons hold.\nPOSITION: ${position}\nCHANGED: no\nREASON: Nothing said changes it.`,
  synthesis: () => `POSITION: ${position}\n${consensusText}`,
  ratification: (dissenting) =>
    JSON.stringify(dissenting ? { vote: "dissent", ...dissent } : { vote: "endorse", rationale: "It is what I proposed." })
}

type Body = { readonly model?: string; readonly messages?: ReadonlyArray<{ readonly role: "system" | "user" | "assistant" | "tool"; readonly content: string }> }

/** The round of a request the fake received, if it is a council's. */
export const roundOfRequest = (request: FakeOpenAi.RecordedRequest): PromptRound | undefined =>
  roundOf(((request.body ?? {}) as Body).messages ?? [])

/**
 * Has `fake` answer council rounds until its next `reset`; `fails` (upstream model names) answer
 * every round with a 400, so that they are dropped.
 */
export const answerCouncil = (
  fake: FakeOpenAi.FakeOpenAi,
  options: {
    readonly dissenter?: string
    readonly fails?: ReadonlyArray<string>
    /** Milliseconds before each answer of these rounds begins. */
    readonly slow?: Partial<Record<PromptRound, number>>
  } = {}
) =>
  fake.respondWith((request) => {
    const round = roundOfRequest(request)
    if (round === undefined) return undefined
    const model = ((request.body ?? {}) as Body).model ?? ""
    if (options.fails?.includes(model)) return FakeOpenAi.badRequest("This model refuses")
    const delay = options.slow?.[round]
    return { answer: answers[round](model === options.dissenter), usage: usagePerCall, ...(delay === undefined ? {} : { firstByteDelayMs: delay }) }
  })
