/**
 * Connected repositories on two server instances sharing one PostgreSQL database (in-process,
 * each with its own job runner and caches): both read the same stored snapshot and status, and
 * however the instances are asked to index, only one indexes the repository at a time.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts, DirectoryIndexer, TestDatabase, TestServer } from "@huddle/testkit"
import { Duration, Redacted } from "effect"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

describe.skipIf(!TestDatabase.availableEngines().includes("postgres"))("repositories on two instances sharing one PostgreSQL", () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it("reads one snapshot on both instances, and only one of them indexes at a time", async () => {
    const database = await TestDatabase.fresh("postgres")
    cleanups.push(() => database.drop())
    if (database.engine._tag !== "Postgres") throw new Error("expected PostgreSQL")
    const url = Redacted.value(database.engine.url)
    const root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-instances-")))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    const dir = join(root, "repo")
    for (let i = 0; i < 8; i++) {
      mkdirSync(join(dir, "src"), { recursive: true })
      writeFileSync(join(dir, "src", `f${i}.ts`), `export const f${i} = ${i}\n`)
    }

    // Both instances run in this process: the indexer sees every run of either.
    const runs = { running: 0, most: 0, count: 0 }
    const indexer = DirectoryIndexer.layer({
      perFile: "25 millis",
      onRun: {
        started: () => {
          runs.count++
          runs.running++
          runs.most = Math.max(runs.most, runs.running)
        },
        ended: () => void runs.running--
      }
    })
    const options: TestServer.Options = { database, grounding: { roots: [root], indexer, jobs: { pollEvery: Duration.millis(200) } } }
    const [a, b] = await Promise.all([TestServer.start(options), TestServer.start(options)])
    cleanups.push(() => a.stop(), () => b.stop())

    const user = await Accounts.signupAndLogin(a)
    const workspace = (await b.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id as string
    const status = (server: TestServer.TestServer) => server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })
    const settled = async (version: number) => {
      for (let i = 0; i < 800; i++) {
        const res = await status(a)
        if (res.body.status === "ready" && res.body.index_version >= version && runs.running === 0) return res.body
        await sleep(25)
      }
      throw new Error((await status(a)).text)
    }

    expect((await b.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { path: dir } })).status).toBe(202)
    const reindex = (server: TestServer.TestServer) => server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    for (let i = 0; i < 3; i++) {
      const answers = await Promise.all([reindex(a), reindex(b), reindex(a), reindex(b)])
      expect(answers.map((res) => res.status)).toEqual([202, 202, 202, 202])
      await sleep(100)
    }
    const first = await settled(1)
    expect(runs.most).toBe(1)
    expect(runs.count).toBeGreaterThan(1)
    expect(first).toMatchObject({ files: { total: 8, by_category: { source: 8 } }, index_version: runs.count })
    expect((await status(b)).body).toEqual(first)

    writeFileSync(join(dir, "src", "f3.ts"), "export const f3 = 33\n")
    await reindex(b)
    const second = await settled(first.index_version + 1)
    expect(second).toMatchObject({ changes: { added: 0, changed: 1, removed: 0 }, files: { total: 8 } })
    expect((await status(b)).body).toEqual(second)
    expect(runs.most).toBe(1)

    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const rows = await client.query(
        `SELECT f.path, f.indexed_version FROM repository_files f JOIN repositories r ON r.id = f.repository_id
         WHERE r.workspace_id = $1 AND f.indexed_version = r.index_version`,
        [workspace]
      )
      expect(rows.rows).toEqual([{ path: "src/f3.ts", indexed_version: second.index_version }])
    } finally {
      await client.end()
    }
  }, 90_000)
})
