/**
 * A connected repository whose files are swapped for symlinks leading outside the operator's
 * roots while it is re-indexed again and again: no run's index, and no answer of
 * `GET …/repository/files`, ever holds the outside text. With the real indexer, over HTTP; then
 * the race's window reached on purpose (a file swapped for a link just before it is opened).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { hooks } from "@huddle/adapters/grounding/ConfinedFiles"
import { Accounts, LinkSwapper, TestServer } from "@huddle/testkit"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const files = ["src/f0.ts", "src/f1.ts", "src/f2.ts", "src/f3.ts"]

describe("a repository's files swapped for links out of the roots while it is indexed", () => {
  let server: TestServer.TestServer
  let root: string
  let outside: string
  let dir: string
  const secret = `OUTSIDE_THE_ROOTS_${process.pid}`

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-race-roots-")))
    outside = realpathSync(mkdtempSync(join(tmpdir(), "huddle-race-outside-")))
    writeFileSync(join(outside, "secret.ts"), `export const key = "${secret}"\n`)
    dir = join(root, "repo")
    mkdirSync(join(dir, "src"), { recursive: true })
    for (const [i, file] of files.entries()) writeFileSync(join(dir, file), `export const inside${i} = ${i}\n`)
    server = await TestServer.start({
      grounding: { roots: [root], jobs: { pollEvery: Duration.millis(200), progressEvery: Duration.zero } },
      // The loop reads the repository's status and files as fast as runs end: not the limit under test.
      rateLimits: { read: 100_000 }
    })
  })
  afterAll(async () => {
    await server.stop()
    rmSync(root, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })

  let user: Accounts.TestUser
  let workspace: string
  let version = 0
  const status = () => server.request("GET", `/v1/workspaces/${workspace}/repository`, { token: user.session })
  /** Asks for a run and waits for it (ready or failed); its status. */
  const reindex = async () => {
    const asked = version === 0
      ? await server.request("PUT", `/v1/workspaces/${workspace}/repository`, { token: user.session, body: { path: dir } })
      : await server.request("POST", `/v1/workspaces/${workspace}/repository/reindex`, { token: user.session })
    expect(asked.status, asked.text).toBe(202)
    const deadline = Date.now() + 30_000
    for (;;) {
      const res = await status()
      if (res.body.status === "failed") throw new Error(res.text)
      if (res.body.status === "ready" && res.body.index_version > version) {
        version = res.body.index_version
        return res.body
      }
      if (Date.now() > deadline) throw new Error(`the run never finished: ${res.text}`)
      await sleep(10)
    }
  }
  const served = (path: string) =>
    server.request("GET", `/v1/workspaces/${workspace}/repository/files?${new URLSearchParams({ path })}`, { token: user.session })

  beforeAll(async () => {
    user = await Accounts.signupAndLogin(server)
    workspace = (await server.request("GET", "/v1/workspaces", { token: user.session })).body.data[0].id
    expect(await reindex()).toMatchObject({ files: { total: files.length } })
  })

  it("never indexes nor serves the outside file while re-indexing in a loop over a few seconds of swaps", async () => {
    let swapping = true
    const swaps = LinkSwapper.swap(files.map((file) => join(dir, file)), join(outside, "secret.ts"), 5000).finally(() => (swapping = false))
    let runs = 0
    let sawLinks = 0
    const leaks: Array<string> = []
    while (swapping) {
      const run = await reindex()
      runs++
      if (run.skipped.by_reason.outside_root > 0) sawLinks++
      for (const file of files) {
        const res = await served(file)
        if (res.text.includes(secret)) leaks.push(`run ${runs}: ${file}`)
      }
    }
    const total = await swaps
    expect(total).toBeGreaterThan(200)
    expect(runs).toBeGreaterThan(3)
    expect(leaks, `${leaks.length} leaks in ${runs} runs over ${total} swaps (${sawLinks} runs met a link out)`).toEqual([])
    // Swapped back: every file is indexed and served again, from inside.
    expect((await reindex()).files.total).toBe(files.length)
    expect((await served("src/f2.ts")).body).toMatchObject({ path: "src/f2.ts" })
  }, 60_000)

  it("neither indexes nor serves a file swapped for a link out just before it is opened", async () => {
    const target = join(dir, "src/f2.ts")
    hooks.beforeOpen = (absolute) => {
      if (absolute !== target) return
      hooks.beforeOpen = undefined
      unlinkSync(absolute)
      symlinkSync(join(outside, "secret.ts"), absolute)
    }
    try {
      const run = await reindex()
      expect(run).toMatchObject({ files: { total: files.length - 1 }, skipped: { by_reason: { outside_root: 1 }, paths: { outside_root: ["src/f2.ts"] } } })
      const res = await served("src/f2.ts")
      expect(res.status, res.text).toBe(404)
      expect(res.text).not.toContain(secret)
    } finally {
      hooks.beforeOpen = undefined
    }
  })
})
