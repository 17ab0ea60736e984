/**
 * A charge is the usage times the model's rates (credits per million tokens), rounded up once
 * (DESIGN §8, Prices), and the worst case a call reserves covers whatever it can be charged within
 * its caps, cache writes at their higher rate included. Prices and usages are derived from the
 * schemas (`ModelPricing`, `CatalogModel`, `Usage`), scaled into real magnitudes: rates up to a
 * credit a token, calls up to two million tokens of each kind.
 */
import { describe, expect, it } from "@effect/vitest"
import { CatalogModel, costOf, ModelPricing, promptRateOf, Usage } from "@huddle/domain/models/Model"
import { inputMargin, worstCaseOf } from "@huddle/domain/models/Quote"
import { Arbitrary, FastCheck as fc, Schema } from "effect"

const rate = (n: number) => n % 1_000_001
const tokens = (n: number) => Math.abs(n) % 2_000_001

const scaledPricing = (pricing: ModelPricing): ModelPricing => ({
  input: rate(pricing.input),
  output: rate(pricing.output),
  ...(pricing.cache_read === undefined ? {} : { cache_read: rate(pricing.cache_read) }),
  ...(pricing.cache_write === undefined ? {} : { cache_write: rate(pricing.cache_write) })
})

const pricing = Arbitrary.make(ModelPricing).map(scaledPricing)
const model = Arbitrary.make(CatalogModel).map((m) =>
  new CatalogModel({ ...m, pricing: scaledPricing(m.pricing), max_output_tokens: 1 + (m.max_output_tokens % 200_000) })
)
const usage = Arbitrary.make(Usage).map((u) =>
  new Usage({
    input_tokens: tokens(u.input_tokens),
    output_tokens: tokens(u.output_tokens),
    ...(u.cache_read_tokens === undefined ? {} : { cache_read_tokens: tokens(u.cache_read_tokens) }),
    ...(u.cache_write_tokens === undefined ? {} : { cache_write_tokens: tokens(u.cache_write_tokens) })
  })
)

/** The exact cost in millionths of a credit, in integers that cannot overflow. */
const exactMillionths = (p: ModelPricing, u: Usage): bigint =>
  BigInt(u.input_tokens) * BigInt(p.input) + BigInt(u.output_tokens) * BigInt(p.output) +
  BigInt(u.cache_read_tokens ?? 0) * BigInt(p.cache_read ?? p.input) +
  BigInt(u.cache_write_tokens ?? 0) * BigInt(p.cache_write ?? p.input)

describe("costOf", () => {
  it.prop("charges the usage times the rates, rounded up once: never below the exact cost, less than a credit above", [pricing, usage], ([p, u]) => {
    expect(Schema.is(ModelPricing)(p)).toBe(true)
    const charged = costOf({ pricing: p }, u)
    const exact = exactMillionths(p, u)
    expect(Number.isSafeInteger(charged)).toBe(true)
    expect(BigInt(charged) * 1_000_000n >= exact).toBe(true)
    expect(BigInt(charged - 1) * 1_000_000n < exact).toBe(true)
  })

  it.prop("prices cache tokens at the input rate when the model has no cache rates", [pricing, usage], ([p, u]) => {
    const { cache_read: _read, cache_write: _write, ...uncached } = p
    const allInput = new Usage({ input_tokens: u.input_tokens + (u.cache_read_tokens ?? 0) + (u.cache_write_tokens ?? 0), output_tokens: u.output_tokens })
    expect(costOf({ pricing: uncached }, u)).toBe(costOf({ pricing: uncached }, allInput))
  })

  it.prop(
    "charges what the older price per 1,000 tokens charged, at a thousand times the rate per million",
    [fc.nat({ max: 1000 }), fc.nat({ max: 1000 }), usage],
    ([inputPer1k, outputPer1k, u]) => {
      const before = Math.ceil((u.input_tokens * inputPer1k + u.output_tokens * outputPer1k) / 1000)
      expect(costOf({ pricing: { input: inputPer1k * 1000, output: outputPer1k * 1000 } }, { input_tokens: u.input_tokens, output_tokens: u.output_tokens }))
        .toBe(before)
    }
  )
})

describe("worstCaseOf", () => {
  /** A usage within a call's caps: its prompt split any way among uncached, cache reads and cache writes. */
  const within = (estimatedInput: number, outputCap: number) =>
    fc.record({
      prompt: fc.nat({ max: Math.ceil(estimatedInput * inputMargin) }),
      read: fc.double({ min: 0, max: 1, noNaN: true }),
      written: fc.double({ min: 0, max: 1, noNaN: true }),
      output: fc.nat({ max: outputCap })
    }).map(({ output, prompt, read, written }) => {
      const cache_read_tokens = Math.floor(prompt * read)
      const cache_write_tokens = Math.floor((prompt - cache_read_tokens) * written)
      return new Usage({ input_tokens: prompt - cache_read_tokens - cache_write_tokens, output_tokens: output, cache_read_tokens, cache_write_tokens })
    })

  const call = fc.record({
    candidates: fc.array(model, { minLength: 1, maxLength: 3 }),
    estimatedInput: fc.nat({ max: 200_000 }),
    maxOutputTokens: fc.integer({ min: 1, max: 200_000 }),
    pick: fc.nat()
  }).chain((c) => {
    const chosen = c.candidates[c.pick % c.candidates.length]!
    return within(c.estimatedInput, Math.min(c.maxOutputTokens, chosen.max_output_tokens)).map((u) => ({ ...c, chosen, usage: u }))
  })

  it.prop("covers what any candidate can be charged for any usage within the caps", [call], ([{ candidates, chosen, estimatedInput, maxOutputTokens, usage: u }]) => {
    expect(costOf(chosen, u)).toBeLessThanOrEqual(worstCaseOf(candidates, estimatedInput, maxOutputTokens))
  })

  it.prop("is no more than that: a call whose whole prompt goes at its dearest rate, at the output cap, costs it", [model, fc.nat({ max: 200_000 }), fc.integer({ min: 1, max: 200_000 })], ([m, estimatedInput, maxOutputTokens]) => {
    const prompt = Math.ceil(estimatedInput * inputMargin)
    const output = Math.min(maxOutputTokens, m.max_output_tokens)
    const { cache_read = m.pricing.input, cache_write = m.pricing.input, input } = m.pricing
    const dearest = promptRateOf(m) === cache_write ? { cache_write_tokens: prompt } : promptRateOf(m) === cache_read ? { cache_read_tokens: prompt } : { input_tokens: prompt }
    expect(promptRateOf(m)).toBe(Math.max(input, cache_read, cache_write))
    const worst = new Usage({ input_tokens: 0, output_tokens: output, ...dearest })
    expect(worstCaseOf([m], estimatedInput, maxOutputTokens)).toBe(Math.max(1, costOf(m, worst)))
  })
})
