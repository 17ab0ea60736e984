/**
 * A turn that did not complete, in words that say what to do: not enough credits (with the
 * balance), too many requests (with the wait), or an organization's policy.
 */
import { credits } from "../../format.js"
import type { Refusal } from "../../stream.js"

const seconds = (n: number) => `${n} ${n === 1 ? "second" : "seconds"}`

/** `balance`: the person's balance, fetched after a 402 (the refusal names only what was needed). */
export const sayRefusal = (refusal: Refusal, balance: number | null): string => {
  switch (refusal.code) {
    case "INSUFFICIENT_CREDITS":
      return `Not enough credits. ${refusal.message}.${balance === null ? "" : ` Your balance is ${credits(balance)}.`}`
    case "RATE_LIMITED":
      return `Too many requests just now. ${refusal.retryAfter === null ? "Wait a moment" : `Wait ${seconds(refusal.retryAfter)}`} and send it again.`
    case "POLICY_VIOLATION":
      return `Your organization's policy does not allow this: ${refusal.message}`
    default:
      return refusal.message
  }
}
