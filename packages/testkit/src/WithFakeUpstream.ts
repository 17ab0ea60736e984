/**
 * The in-process server in front of a fake OpenAI-compatible upstream, with a catalog of its
 * models: what tests of the model path (huddles, chat completions, idempotency) start from.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { CatalogModel } from "@huddle/domain/models/Model"
import { Redacted } from "effect"
import * as FakeOpenAi from "./FakeOpenAi.js"
import * as TestServer from "./TestServer.js"

/** The key Huddle sends upstream; tests check it never leaks. */
export const upstreamKey = "sk-upstream-secret"

/** One credit per input token and two per output token (credits per million tokens), so that charges are easy to check. */
export const pricing = { input: 1_000_000, output: 2_000_000 }

/** A catalog entry served by the fake upstream (provider `fake`). */
export const model = (
  id: string,
  tier: string,
  options: { readonly upstream_model?: string; readonly max_output_tokens?: number; readonly pricing?: CatalogModel["pricing"]; readonly kind?: "chat" | "embedding" } = {}
) => ({
  id,
  tier,
  provider: "fake",
  ...(options.kind === undefined ? {} : { kind: options.kind }),
  ...(options.upstream_model === undefined ? {} : { upstream_model: options.upstream_model }),
  pricing: options.pricing ?? pricing,
  context_window: 16_000,
  max_output_tokens: options.max_output_tokens ?? 200
})

export interface WithFakeUpstream {
  readonly server: TestServer.TestServer
  readonly fake: FakeOpenAi.FakeOpenAi
  readonly stop: () => Promise<void>
}

export const start = async (
  models: ReadonlyArray<ReturnType<typeof model>>,
  options: Omit<TestServer.Options, "providers" | "catalog"> & {
    /** The catalog's aliases (`ModelCatalog.aliases`): globs naming a model or a tier. */
    readonly aliases?: ReadonlyArray<{ readonly match: string; readonly target: string }>
  } = {}
): Promise<WithFakeUpstream> => {
  const { aliases, ...serverOptions } = options
  const fake = await FakeOpenAi.start({ apiKey: upstreamKey })
  const dir = mkdtempSync(join(tmpdir(), "huddle-catalog-"))
  const stopAll = async (server?: TestServer.TestServer) => {
    try {
      await server?.stop()
      await fake.stop()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    writeFileSync(join(dir, "catalog.json"), JSON.stringify(aliases === undefined ? { models } : { models, aliases }))
    const server = await TestServer.start({
      starterCredits: 100_000,
      ...serverOptions,
      providers: { servers: [{ name: "fake", baseUrl: fake.baseUrl, apiKey: Redacted.make(upstreamKey) }] },
      catalog: { path: join(dir, "catalog.json") }
    })
    return { server, fake, stop: () => stopAll(server) }
  } catch (error) {
    await stopAll()
    throw error
  }
}
