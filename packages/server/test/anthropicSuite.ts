/**
 * For the enclosing `describe`: the in-process server with the offline models and one model,
 * `claude-fake`, served by a fake Anthropic upstream that records what it receives, started
 * once before its tests and stopped after them.
 * `onStart` receives both parts (tests keep them in variables of their own).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FakeAnthropic, TestServer } from "@huddle/testkit"
import { Redacted } from "effect"
import { afterAll, beforeAll } from "vitest"

const entry = (id: string, tier: string, provider: string, pricing: { readonly [rate: string]: number }) => ({
  id,
  tier,
  provider,
  pricing,
  context_window: 32_768,
  max_output_tokens: 1024
})

// The default catalog's offline models, and claude-fake at one credit per input token and two per
// output token (credits per million tokens), so that charges are exact; its cache is read at a
// tenth of a credit a token and written at 1.25, Anthropic's ratios.
const catalog = {
  models: [
    entry("offline-economy", "economy", "offline", { input: 1000, output: 2000 }),
    entry("claude-fake", "standard", "anthropic", { input: 1_000_000, output: 2_000_000, cache_read: 100_000, cache_write: 1_250_000 }),
    entry("offline-premium", "premium", "offline", { input: 4000, output: 8000 })
  ]
}

/** What a call with this Anthropic usage costs on `claude-fake`. */
export const claudeCharge = (usage: FakeAnthropic.Usage) => usage.input_tokens + 2 * usage.output_tokens

/** What a call with this usage costs on `offline-economy`: 1 and 2 credits per 1,000 tokens, rounded up. */
export const offlineEconomyCharge = (usage: { readonly input: number; readonly output: number }) =>
  Math.ceil((usage.input + 2 * usage.output) / 1000)

export const anthropicSuite = (
  onStart: (started: { readonly anthropic: FakeAnthropic.FakeAnthropic; readonly server: TestServer.TestServer }) => void
) => {
  let anthropic: FakeAnthropic.FakeAnthropic | undefined
  let server: TestServer.TestServer | undefined
  let dir: string | undefined
  beforeAll(async () => {
    anthropic = await FakeAnthropic.start()
    dir = mkdtempSync(join(tmpdir(), "huddle-clients-"))
    writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog))
    server = await TestServer.start({
      starterCredits: 100_000,
      providers: { anthropic: { apiKey: Redacted.make("sk-ant-fake"), baseUrl: anthropic.url } },
      catalog: { path: join(dir, "catalog.json") }
    })
    onStart({ anthropic, server })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await anthropic?.stop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })
}
