/**
 * A second process reserving credits against a shared PostgreSQL, for the cross-instance
 * concurrency test: `node reserveMany.js <database url> <user id> <org id> <api key id> <count> <amount>`.
 * Prints `{"reserved": n, "denied": m}`.
 */
import { Database } from "@huddle/adapters"
import * as Credits from "@huddle/domain/credits/Credits"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as CreditsHarness from "../CreditsHarness.js"

const [url, userId, orgId, keyId, count, amount] = process.argv.slice(2)
if (!url || !userId || !orgId || !keyId || !count || !amount) {
  console.error("usage: reserveMany <database url> <user id> <org id> <api key id> <count> <amount>")
  process.exit(2)
}

const program = Effect.gen(function*() {
  const credits = yield* Credits.Credits
  const outcomes = yield* Effect.forEach(
    Array.from({ length: Number(count) }),
    () =>
      credits.reserve({
        userId,
        orgId,
        amount: Number(amount),
        creditFallback: true,
        purpose: "concurrency test",
        authority: { via: "api_key", credentialId: keyId, actorId: userId }
      }).pipe(
        Effect.as("reserved" as const),
        Effect.catchTag("InsufficientCredits", () => Effect.succeed("denied" as const))
      ),
    { concurrency: 8 }
  )
  return {
    reserved: outcomes.filter((o) => o === "reserved").length,
    denied: outcomes.filter((o) => o === "denied").length
  }
})

program.pipe(
  Effect.provide(CreditsHarness.layer(Database.layer({ _tag: "Postgres", url: Redacted.make(url), maxConnections: 8 }))),
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.runPromise
).then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(String(error))
    process.exit(1)
  }
)
