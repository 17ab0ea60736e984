import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { main } from "./examples/embedding.js"

describe("embedding the engine without HTTP", () => {
  it("runs the documented example: a huddle and an intent on the offline provider", async () => {
    const { balance, intent, reply, stages } = await main()
    expect(reply.status).toBe("completed")
    expect(reply.output).toMatch(/^\[offline\]/)
    expect(stages).toEqual([
      "context:started",
      "context:completed",
      "planning:started",
      "planning:completed",
      "review:skipped",
      "execution:started",
      "execution:completed",
      "completion:completed"
    ])
    expect(intent.status).toBe("completed")
    expect(intent.credits_charged).toBeGreaterThan(0)
    expect(balance).toBe(1000 - reply.credits_charged - intent.credits_charged)
  }, 60_000)

  it("is the example docs/embedding.md shows, word for word", () => {
    const example = readFileSync(new URL("./examples/embedding.ts", import.meta.url), "utf8").trim()
    const doc = readFileSync(new URL("../../../docs/embedding.md", import.meta.url), "utf8")
    expect(doc).toContain(example)
  })
})
