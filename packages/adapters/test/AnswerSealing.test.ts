import * as AnswerSealing from "@huddle/adapters/crypto/AnswerSealing"
import { describe, expect, it } from "@effect/vitest"

describe("AnswerSealing", () => {
  const plain = new TextEncoder().encode("{\"key\":\"hk_shown_once\"}")
  const key = AnswerSealing.sealingKey("hk_one")
  const text = (bytes: Uint8Array | undefined) => bytes === undefined ? undefined : new TextDecoder().decode(bytes)

  it("opens what it sealed, and the sealed bytes do not show the answer", () => {
    const sealed = AnswerSealing.seal(key, "fingerprint", plain)
    expect(Buffer.from(sealed).toString("latin1")).not.toContain("hk_shown_once")
    expect(text(AnswerSealing.unseal(key, "fingerprint", sealed))).toBe("{\"key\":\"hk_shown_once\"}")
  })

  it("derives the same key from the same secret and another from another secret", () => {
    expect(AnswerSealing.sealingKey("hk_one")).toEqual(key)
    expect(AnswerSealing.sealingKey("hk_two")).not.toEqual(key)
  })

  it("does not open with another credential's key or for another request", () => {
    const sealed = AnswerSealing.seal(key, "fingerprint", plain)
    expect(AnswerSealing.unseal(AnswerSealing.sealingKey("hk_two"), "fingerprint", sealed)).toBeUndefined()
    expect(AnswerSealing.unseal(key, "another fingerprint", sealed)).toBeUndefined()
  })

  it("does not open tampered, truncated or unknown-version bytes", () => {
    const sealed = AnswerSealing.seal(key, "fingerprint", plain)
    const flipped = (index: number) => {
      const copy = new Uint8Array(sealed)
      copy[index] = copy[index]! ^ 1
      return copy
    }
    // The iv, the tag, the last byte of the ciphertext.
    for (const index of [1, 13, sealed.length - 1]) {
      expect(AnswerSealing.unseal(key, "fingerprint", flipped(index))).toBeUndefined()
    }
    expect(AnswerSealing.unseal(key, "fingerprint", sealed.subarray(0, 28))).toBeUndefined()
    expect(AnswerSealing.unseal(key, "fingerprint", sealed.subarray(0, sealed.length - 1))).toBeUndefined()
    const otherVersion = new Uint8Array(sealed)
    otherVersion[0] = 2
    expect(AnswerSealing.unseal(key, "fingerprint", otherVersion)).toBeUndefined()
  })

  it("seals the same answer differently each time (a fresh iv)", () => {
    const first = AnswerSealing.seal(key, "fingerprint", plain)
    const second = AnswerSealing.seal(key, "fingerprint", plain)
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false)
    expect(text(AnswerSealing.unseal(key, "fingerprint", second))).toBe("{\"key\":\"hk_shown_once\"}")
  })
})
