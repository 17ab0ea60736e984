/**
 * Every entry point answers through one core (`answers/`): one council orchestration, priced in
 * one place, settled by the same rules. The source checks keep a second orchestration or a
 * second pricing from creeping back; the runs check that a council asked through the huddle's
 * pipeline (as JSON-RPC intents are) and through chat completions is accounted the same way:
 * what the report says each participant cost is what the ledger took, and nothing stays held.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Preferences } from "@huddle/domain/settings/Preferences"
import { Completions, type Event } from "@huddle/domain/answers/Completions"
import * as Protocol from "@huddle/domain/council/Protocol"
import { CreditStore } from "@huddle/domain/credits/CreditStore"
import { IntentPipeline } from "@huddle/domain/huddle/IntentPipeline"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { CreditStoreState } from "@huddle/testkit/ports/InMemoryCreditStore"
import * as InMemoryDomain from "@huddle/testkit/ports/InMemoryDomain"
import { standard } from "@huddle/testkit/ports/ScriptedCouncil"
import { models, ScriptedModels } from "@huddle/testkit/ports/ScriptedModels"
import { Chunk, Effect, Stream } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("../../", import.meta.url))

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : []
  })

const all = ["domain", "adapters", "server"].flatMap((pkg) => sources(join(packages, pkg, "src")))

/** A file's code without its comments' lines (a module's documentation may show the calls it makes). */
const code = (file: string) =>
  readFileSync(file, "utf8").split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n")

/** The source files (relative to packages/) whose code matches `pattern`. */
const filesWith = (pattern: RegExp) =>
  all.filter((file) => pattern.test(code(file))).map((file) => relative(packages, file).split("\\").join("/")).sort()

describe("one answer core", () => {
  it("runs a council in one place: the core's execution", () => {
    expect(filesWith(/council\.run\(/)).toEqual(["domain/src/answers/Execution.ts"])
  })

  it("reserves a run of several calls in one place: the core's execution", () => {
    expect(filesWith(/metered\.budget\(/)).toEqual(["domain/src/answers/Execution.ts"])
  })

  it("prices councils and answers in one place: the core's planning (a council's own calls aside)", () => {
    expect(filesWith(/council\.(plan|priced)\(/)).toEqual(["domain/src/answers/Planning.ts"])
    expect(filesWith(/metered\.quote\(/).filter((file) => !file.startsWith("domain/src/council/"))).toEqual(["domain/src/answers/Planning.ts"])
  })

  it("starts one model's metered answer in one place outside the council: the core's execution", () => {
    expect(filesWith(/metered\.run\(/).filter((file) => !file.startsWith("domain/src/council/"))).toEqual(["domain/src/answers/Execution.ts"])
  })
})

const ann = "usr_ann"
const personal = { ownerType: "user", ownerId: ann, pool: "personal" } as const
const balance = Effect.flatMap(CreditStore, (store) => store.balance(personal))
const held = Effect.flatMap(CreditStoreState, (state) => state.held)

/** Ann's credits, and the economy tier's two models seated, each answering every round readably. */
const seated = Effect.gen(function*() {
  yield* (yield* CreditStore).grant({ account: personal, amount: 10_000, reason: "test", actorId: null })
  const script = yield* ScriptedModels
  for (const [i, model] of [models.economy, models.economyDear].entries()) {
    yield* script.respond(model.id, (request) => standard(i + 1, Protocol.roundOf(request.messages)!, request))
  }
  return yield* (yield* RequestScopes).resolve(InMemoryDomain.principal(ann), {})
})

const question = "Which database should a small team start with?"

describe("a council, whichever entry point asks", () => {
  it.effect("through the pipeline: the intent's charge is the report's participants' credits, and the ledger's", () =>
    Effect.gen(function*() {
      const scope = yield* seated
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* IntentPipeline).submit({
        scope,
        sessionId: null,
        input: question,
        request: new Preferences({ mode: "multi", model_tier: "economy" })
      })))
      const done = events.at(-1)!
      assert(done._tag === "Done")
      const { consensus, credits_charged } = done.outcome.intent
      assert(consensus !== undefined)
      expect(credits_charged).toBeGreaterThan(0)
      expect(consensus.participants.reduce((sum, seat) => sum + seat.credits, 0)).toBe(credits_charged)
      expect(10_000 - (yield* balance)).toBe(credits_charged)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))

  it.effect("through chat completions: the concluded charge is the report's participants' credits, and the ledger's", () =>
    Effect.gen(function*() {
      const scope = yield* seated
      const events: ReadonlyArray<Event> = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* Completions).stream({
        scope,
        model: "council-economy",
        messages: [{ role: "user", content: question }]
      })))
      const concluded = events.at(-1)!
      assert(concluded._tag === "Concluded")
      expect(concluded.charged).toBeGreaterThan(0)
      expect(concluded.report.participants.reduce((sum, seat) => sum + seat.credits, 0)).toBe(concluded.charged)
      expect(10_000 - (yield* balance)).toBe(concluded.charged)
      expect(yield* held).toBe(0)
    }).pipe(Effect.provide(InMemoryDomain.layer())))
})
