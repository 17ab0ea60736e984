import type { MemoryScope } from "@huddle/domain/memories/Memory"
import {
  assemble,
  type ContextMemory,
  estimateTokens,
  normalise,
  precedence
} from "@huddle/domain/memories/ContextAssembly"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"

const scope: FastCheck.Arbitrary<MemoryScope> = FastCheck.constantFrom("org", "workspace", "personal")

/** Few distinct texts in many spellings (case, padding, inner white space), so that duplicates are common. */
const lookalike = FastCheck.record({
  base: FastCheck.constantFrom("use tabs", "ship on tuesdays", "prefer typescript", "a", "never force push to main"),
  repeat: FastCheck.integer({ min: 1, max: 12 }),
  upper: FastCheck.boolean(),
  space: FastCheck.constantFrom(" ", "  ", "\n", "\t ", " \r\n")
}).map(({ base, repeat, space, upper }) => {
  const text = Array.from({ length: repeat }, () => base).join(" ")
  return `${space}${(upper ? text.toUpperCase() : text).replaceAll(" ", space)}${space}`
})

const content = FastCheck.oneof(lookalike, FastCheck.string({ minLength: 1, maxLength: 120 }))

const id = FastCheck.integer({ min: 0, max: 99_999 }).map((n) => `mem_${n.toString().padStart(5, "0")}`)

const candidates = FastCheck.uniqueArray(FastCheck.record({ id, scope, content }), {
  selector: (memory) => memory.id,
  maxLength: 40
})

const budget = FastCheck.oneof(FastCheck.integer({ min: 0, max: 400 }), FastCheck.integer({ min: 0, max: 100_000 }))

/** The candidates and the same candidates in another order. */
const shuffled = candidates.chain((memories) =>
  FastCheck.tuple(
    FastCheck.constant(memories),
    FastCheck.shuffledSubarray(memories, { minLength: memories.length, maxLength: memories.length })
  )
)

const ranksBefore = (a: ContextMemory, b: ContextMemory) =>
  precedence[a.scope] < precedence[b.scope] || (precedence[a.scope] === precedence[b.scope] && a.id < b.id)

const distinctContents = (memories: ReadonlyArray<ContextMemory>) => new Set(memories.map((m) => normalise(m.content))).size

describe("ContextAssembly.assemble", () => {
  it.prop("never exceeds the budget, and counts exactly the tokens it keeps", [candidates, budget], ([memories, max]) => {
    const result = assemble(memories, max)
    expect(result.tokens).toBeLessThanOrEqual(max)
    expect(result.tokens).toBe(result.memories.reduce((sum, m) => sum + estimateTokens(m.content), 0))
  })

  it.prop("keeps no two memories with the same normalised content", [candidates, budget], ([memories, max]) => {
    const kept = assemble(memories, max).memories
    expect(distinctContents(kept)).toBe(kept.length)
  })

  it.prop("orders org before workspace before personal, oldest id first within a scope", [candidates, budget], ([memories, max]) => {
    const kept = assemble(memories, max).memories
    for (let i = 1; i < kept.length; i++) {
      expect(ranksBefore(kept[i - 1]!, kept[i]!)).toBe(true)
    }
  })

  it.prop("depends only on the candidates, not on their order", [shuffled, budget], ([[memories, reordered], max]) => {
    expect(assemble(reordered, max)).toEqual(assemble(memories, max))
  })

  it.prop("keeps the highest-precedence copy of each content", [candidates], ([memories]) => {
    for (const kept of assemble(memories, Infinity).memories) {
      const rivals = memories.filter((m) => m.id !== kept.id && normalise(m.content) === normalise(kept.content))
      expect(rivals.filter((rival) => ranksBefore(rival, kept))).toEqual([])
    }
  })

  it.prop("keeps unchanged candidates only", [candidates, budget], ([memories, max]) => {
    const byId = new Map(memories.map((m) => [m.id, m]))
    for (const kept of assemble(memories, max).memories) {
      const original = byId.get(kept.id)
      expect(original).toBeDefined()
      expect(kept).toEqual({ id: original!.id, scope: original!.scope, content: original!.content })
    }
  })

  it.prop("accounts for every distinct content: kept or dropped, stopping only when the next one does not fit", [candidates, budget], ([memories, max]) => {
    const result = assemble(memories, max)
    expect(result.memories.length + result.dropped).toBe(distinctContents(memories))
    const unbounded = assemble(memories, Infinity)
    expect(unbounded.dropped).toBe(0)
    // What is kept is a prefix of what an unbounded budget keeps; the first left out would not fit.
    expect(result.memories).toEqual(unbounded.memories.slice(0, result.memories.length))
    const next = unbounded.memories[result.memories.length]
    if (next !== undefined) expect(result.tokens + estimateTokens(next.content)).toBeGreaterThan(max)
  })

  it("estimates a token per four characters, rounding up", () => {
    expect([0, 1, 4, 5, 8, 9].map((n) => estimateTokens("x".repeat(n)))).toEqual([0, 1, 1, 2, 2, 3])
  })

  it("treats case and white space as the same content", () => {
    expect(normalise("  Use\tTABS \n please ")).toBe("use tabs please")
  })

  it("keeps the org copy of a duplicate, then workspace, then personal, within budget", () => {
    const memories: ReadonlyArray<ContextMemory> = [
      { id: "mem_3", scope: "personal", content: "Ship on Tuesdays" },
      { id: "mem_1", scope: "personal", content: "Prefer TypeScript" },
      { id: "mem_4", scope: "org", content: "ship  on tuesdays" },
      { id: "mem_2", scope: "workspace", content: "Tests live in test/" },
      { id: "mem_5", scope: "org", content: "No force pushes" }
    ]
    expect(assemble(memories, 1000)).toEqual({
      memories: [
        { id: "mem_4", scope: "org", content: "ship  on tuesdays" },
        { id: "mem_5", scope: "org", content: "No force pushes" },
        { id: "mem_2", scope: "workspace", content: "Tests live in test/" },
        { id: "mem_1", scope: "personal", content: "Prefer TypeScript" }
      ],
      tokens: 5 + 4 + 5 + 5,
      dropped: 0
    })
    // 5 + 4 fit in 12; the workspace memory (5) would not, and nothing after it is taken.
    expect(assemble(memories, 12)).toEqual({
      memories: [
        { id: "mem_4", scope: "org", content: "ship  on tuesdays" },
        { id: "mem_5", scope: "org", content: "No force pushes" }
      ],
      tokens: 9,
      dropped: 2
    })
    expect(assemble(memories, 0)).toEqual({ memories: [], tokens: 0, dropped: 4 })
    expect(assemble([], 100)).toEqual({ memories: [], tokens: 0, dropped: 0 })
  })
})
