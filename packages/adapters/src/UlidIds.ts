/**
 * Time-ordered ids (ULIDs, monotonic within a millisecond) with a readable prefix:
 * `<kind>_<26 characters of lower-case Crockford base 32>`, 10 for the milliseconds since the
 * epoch and 16 random ones (80 bits).
 *
 * Written here rather than taken from `ulid`, which calls `crypto.getRandomValues` once per
 * character: the random characters come from a pool of random bytes, refilled 4 KiB at a time.
 * As with `ulid`'s `monotonicFactory`, an id made in the same millisecond as the previous one
 * (or after the clock went back) keeps the previous one's time and increments its random part,
 * so that ids sort in the order they were made.
 */
import { randomFillSync } from "node:crypto"
import { Ids } from "@huddle/domain/shared/Ids"
import { Effect, Layer } from "effect"

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
const timeLength = 10
const randomLength = 16
const poolSize = 4096

/** A ULID maker (without prefix); `now` and `fill` are replaceable for tests. */
export const generator = (
  now: () => number = Date.now,
  fill: (buffer: Uint8Array) => void = randomFillSync
): () => string => {
  const pool = new Uint8Array(poolSize)
  let used = poolSize
  // The random part of the last id, one base-32 digit (0–31) per character.
  const digits = new Uint8Array(randomLength)
  let lastTime = -1
  let time = ""

  const increment = () => {
    for (let i = randomLength - 1; i >= 0; i--) {
      if (digits[i]! < 31) {
        digits[i]!++
        return
      }
      digits[i] = 0
    }
    // 2^80 ids in one millisecond: not reachable, but never wrap round to a smaller id.
    throw new Error("UlidIds: the random part of a ULID overflowed within one millisecond")
  }

  return () => {
    const millis = now()
    if (millis <= lastTime) {
      increment()
    } else {
      lastTime = millis
      time = encodeTime(millis)
      if (used + randomLength > poolSize) {
        fill(pool)
        used = 0
      }
      // The top five bits of each byte, as `ulid` takes them.
      for (let i = 0; i < randomLength; i++) digits[i] = pool[used + i]! >>> 3
      used += randomLength
    }
    let id = time
    for (let i = 0; i < randomLength; i++) id += alphabet[digits[i]!]
    return id
  }
}

const encodeTime = (millis: number): string => {
  let rest = millis
  let out = ""
  for (let i = 0; i < timeLength; i++) {
    const digit = rest % 32
    out = alphabet[digit] + out
    rest = (rest - digit) / 32
  }
  return out
}

export const make = Effect.sync(() => {
  const next = generator()
  return Ids.of({ next: (kind) => Effect.sync(() => `${kind}_${next()}`) })
})

export const layer = Layer.effect(Ids, make)
