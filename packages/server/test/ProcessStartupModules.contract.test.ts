/**
 * What the REAL built server loads at start, when it runs on PostgreSQL: not the embedded engine
 * (PGlite), not `@effect/platform-node`'s cluster modules, not tree-sitter or MiniSearch (loaded
 * when a repository is first indexed or searched), not prom-client or the OTLP exporter when
 * neither metrics nor trace export is configured, not the API reference's bundles (Scalar until
 * `/docs` is first asked for; Swagger UI never) nor the `@effect/platform` and `@effect/sql`
 * indexes that would bring them and every module of those packages. Each is resident memory for
 * nothing in a process that never runs it (docs/performance.md, memory at start).
 *
 * The server runs with a module hook (`--import`) that appends the URL of every module it loads to
 * a file.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { TestDatabase } from "@huddle/testkit"
import { Redacted } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { killAll, onCleanup, scratchDir, startServer } from "./serverProcesses.js"

afterEach(killAll)
afterAll(killAll)

const recorder = `
import { register } from "node:module"
register("data:text/javascript," + encodeURIComponent(\`
import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  appendFileSync(process.env.HUDDLE_TEST_LOADED_MODULES, url + "\\\\n")
  return next(url, context)
}
\`))
`

describe.skipIf(!TestDatabase.availableEngines().includes("postgres"))("the server process on PostgreSQL, at start", () => {
  it("loads neither PGlite, nor @effect/cluster, nor tree-sitter, nor MiniSearch, nor (unconfigured) prom-client and OpenTelemetry, nor the API reference's bundles", async () => {
    const dir = scratchDir()
    const hook = join(dir, "record-loads.mjs")
    const loadedList = join(dir, "loaded.txt")
    writeFileSync(hook, recorder)
    writeFileSync(loadedList, "")
    const database = await TestDatabase.fresh("postgres")
    onCleanup(() => database.drop())
    if (database.engine._tag !== "Postgres") throw new Error("expected a PostgreSQL database")
    const server = await startServer({
      DATABASE_URL: Redacted.value(database.engine.url),
      NODE_OPTIONS: `--import ${hook}`,
      HUDDLE_TEST_LOADED_MODULES: loadedList
    }, { cwd: dir })
    const signup = await fetch(`${server.url}/v1/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `startup-${Date.now()}@example.com`, password: "a long enough password" })
    })
    expect(signup.status, await signup.text()).toBe(201)
    await server.stop()

    const loaded = readFileSync(loadedList, "utf8").split("\n").filter((line) => line !== "")
    // The hook saw the server's modules (else the assertions below would pass for nothing).
    expect(loaded.some((url) => url.endsWith("/packages/server/dist/main.js"))).toBe(true)
    expect(loaded.some((url) => url.includes("/node_modules/pg/"))).toBe(true)
    const unwanted = loaded.filter((url) =>
      /\/node_modules\/(@electric-sql\/pglite|@effect\/cluster|web-tree-sitter|minisearch|prom-client|@effect\/opentelemetry|@opentelemetry)\//.test(url) ||
      /\/adapters\/dist\/(sql\/Pglite|cache\/PgliteChangeFeed)/.test(url) ||
      /\/node_modules\/@effect\/(platform|sql)\/dist\/(esm|cjs)\/(index|HttpApiSwagger|HttpApiScalar|internal\/httpApiScalar|internal\/httpApiSwagger)\.js$/.test(url)
    )
    expect(unwanted).toEqual([])
  })
})
