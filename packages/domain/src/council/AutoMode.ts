/**
 * Auto mode: when a council is worth its cost (decision 0018). Three cheap signals, in order:
 *
 * 1. The question's nature: a light message (a greeting, a thanks, a few words without a
 *    question) gets a single answer; nothing is gained by deliberating it.
 * 2. The member's credits and policy: when the council's worst case cannot be reserved (the
 *    balance, the org's fallback policy or the member's cap), a single answer.
 * 3. The answer's uncertainty: seat 1 proposes (the council's first proposal) and seat 2 gives a
 *    second opinion, independently: its position alone, a call capped at a line. When the two
 *    positions agree (`Protocol.samePosition`) the proposal is the answer; otherwise the council
 *    goes on, seat 2 asked for its full proposal with the others. A participant whose call
 *    failed is replaced by the next seat before deciding: a failure says nothing about the
 *    question.
 *
 * Research on debate finds most of its gain where independent answers disagree, and little where
 * they agree; deciding when to deliberate saves most of the cost (see the decision record).
 */
export type Nature =
  | { readonly _tag: "Light"; readonly reason: string }
  | { readonly _tag: "Open" }

const greeting = /^(hi|hello|hey|thanks|thank you|thx|ok|okay|good (morning|afternoon|evening)|bye|cheers)\b[\s!.,]*$/i

/** Whether a message is light enough that a single answer is the only sensible one. */
export const natureOf = (input: string): Nature => {
  const text = input.trim()
  if (greeting.test(text)) return { _tag: "Light", reason: "a greeting or acknowledgement needs no council" }
  const words = text.split(/\s+/).filter((word) => word.length > 0)
  if (words.length <= 3 && !text.includes("?")) return { _tag: "Light", reason: "a message of a few words without a question" }
  return { _tag: "Open" }
}

export const reasons = {
  light: (nature: Extract<Nature, { _tag: "Light" }>) => nature.reason,
  credits: "the credits available cover a single answer, not a council's worst case",
  noCouncil: "no council can be formed from this tier's models",
  agreed: "two independent answers agreed",
  agreedAfterFailure: "two independent answers agreed (a participant that failed was replaced by the next)",
  disagreed: "two independent answers disagreed",
  failed: "fewer than two independent answers could be had"
} as const
