/**
 * A database error that is a bug (a constraint the code should have respected) is answered as
 * one — 500 INTERNAL with the request id, logged once with its cause — never as an outage (503),
 * on both engines. The constraints are added to the schema behind the code's back, which is what
 * a missed validation looks like from the outside. Outages: Faults.contract.test.ts.
 */
import { Accounts, TestDatabase, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe.each(TestDatabase.availableEngines())("a database error that is a bug, not an outage (%s)", (engine) => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start({
      engine,
      setupSql: `ALTER TABLE memories ADD CONSTRAINT memories_no_secret_word CHECK (content NOT LIKE '%xyzzy%');
                 CREATE UNIQUE INDEX memories_one_content_idx ON memories (content);`
    })
  })
  afterAll(() => server.stop())

  it("is answered 500 INTERNAL with the request id, never 503, and logged once at error level with its cause", async () => {
    const user = await Accounts.signupAndLogin(server)
    const write = (content: string, requestId: string) =>
      server.request("POST", "/v1/memories", {
        token: user.session,
        body: { content, scope: "personal" },
        headers: { "x-request-id": requestId }
      })
    expect((await write("twice", "bug-setup")).status).toBe(201)
    const cases = [
      { res: await write("a xyzzy here", "bug-check"), requestId: "bug-check", cause: /\(23514\) constraint memories_no_secret_word/ },
      { res: await write("twice", "bug-unique"), requestId: "bug-unique", cause: /\(23505\) constraint memories_one_content_idx/ }
    ]
    for (const { cause, requestId, res } of cases) {
      expect(res.status, res.text).toBe(500)
      expect(res.headers.get("retry-after")).toBeNull()
      expect(res.headers.get("x-request-id")).toBe(requestId)
      expect(res.body).toEqual({
        error: "INTERNAL",
        message: `An unexpected error occurred; quote request id ${requestId} when reporting it`
      })
      expect(res.text).not.toMatch(/memories|constraint|violates|23\d{3}/)
      const lines = server.logs.map((line) => JSON.parse(line)).filter((line) =>
        line.annotations?.request_id === requestId && line.logLevel !== "INFO"
      )
      expect(lines).toEqual([expect.objectContaining({ logLevel: "ERROR", message: "unexpected failure" })])
      expect(lines[0].annotations.defect).toMatch(cause)
    }
    const listed = await server.request("GET", "/v1/memories", { token: user.session })
    expect(listed.body.data.map((memory: { content: string }) => memory.content)).toEqual(["twice"])
  })
})
