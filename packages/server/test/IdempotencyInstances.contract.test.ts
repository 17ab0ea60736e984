/**
 * `Idempotency-Key` across instances: two REAL server processes on one fresh PostgreSQL
 * database (`npm run test:postgres`). Duplicates sent to both at once run once, and either
 * instance replays what the other recorded.
 */
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { Accounts, TestDatabase } from "@huddle/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { killAll, mainJs, onCleanup, startServer } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

it("finds the built server", () => {
  expect(existsSync(mainJs), `${mainJs} is missing: run tsc -b first`).toBe(true)
})

const count = async (url: string, text: string, values: ReadonlyArray<unknown>) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return Number((await client.query(text, [...values])).rows[0].count)
  } finally {
    await client.end()
  }
}

describe.each(TestDatabase.availableEngines().filter((engine) => engine === "postgres"))("idempotency on two instances (%s)", () => {
  it("runs concurrent duplicates sent to both instances once, and replays on either", async () => {
    const database = await TestDatabase.fresh("postgres")
    onCleanup(() => database.drop())
    if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
    const url = Redacted.value(database.engine.url)
    const env = { DATABASE_URL: url, HUDDLE_STARTER_CREDITS: "100000" }
    const [a, b] = await Promise.all([startServer(env), startServer(env)])

    const user = await Accounts.signupAndLogin(a.api, "idempotent")
    const { key } = await Accounts.createApiKey(b.api, user)
    const before = (await a.api.request("GET", "/v1/me", { token: key })).body.credits.balance as number
    const idempotencyKey = `k-${randomBytes(8).toString("hex")}`
    const send = (i: number) =>
      (i % 2 === 0 ? a : b).api.request("POST", "/v1/huddle", {
        token: key,
        body: { input: "plan the offsite" },
        headers: { "idempotency-key": idempotencyKey }
      })

    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i)))
    const ran = answers.filter((res) => res.status === 200 && res.headers.get("idempotent-replayed") === null)
    expect(ran, answers.map((res) => `${res.status} ${res.text}`).join("\n")).toHaveLength(1)
    for (const res of answers) {
      if (res.status !== 200) expect(res.body.error).toBe("IDEMPOTENCY_IN_PROGRESS")
    }
    const charged = ran[0]!.body.credits_charged as number
    expect(charged).toBeGreaterThan(0)

    for (let i = 0; i < 2; i++) {
      const replay = await send(i)
      expect(replay.status).toBe(200)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(ran[0]!.text)
    }
    // The run's leased reservation reaches the database with its instance's next batch (decision
    // 0021): B's reading of the balance includes it at most a tick later.
    const balanceOnB = async () => (await b.api.request("GET", "/v1/me", { token: key })).body.credits.balance as number
    let balance = await balanceOnB()
    for (const started = Date.now(); balance !== before - charged && Date.now() - started < 2_000; await new Promise((r) => setTimeout(r, 20))) {
      balance = await balanceOnB()
    }
    expect(balance).toBe(before - charged)
    expect(await count(url, "SELECT count(*) FROM intents WHERE user_id = $1", [user.id])).toBe(1)
  }, 90_000)
})
