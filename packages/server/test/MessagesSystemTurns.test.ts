/**
 * A `role: "system"` turn between the messages (Claude Code sends its environment so, beta
 * `per-turn-control-2026-07-01`): taken as a system message where it stands, so the offline
 * model sees it; a block in it that other providers cannot carry is refused, named.
 */
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe("system turns in the Messages API", () => {
  let server: TestServer.TestServer
  let key: string
  beforeAll(async () => {
    server = await TestServer.start()
    key = (await Accounts.createApiKey(server, await Accounts.signupAndLogin(server))).key
  }, 60_000)
  afterAll(() => server?.stop())

  const send = (messages: ReadonlyArray<unknown>) =>
    server.request("POST", "/v1/messages", {
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: { model: "claude-haiku-4-5", max_tokens: 300, messages }
    })

  it("a system turn after the prompt reaches the model as a system message", async () => {
    const res = await send([
      { role: "user", content: [{ type: "text", text: "Where am I working?" }] },
      { role: "system", content: [{ type: "text", text: "Primary working directory: /srv/app", cache_control: { type: "ephemeral" } }] }
    ])
    expect(res.status, res.text).toBe(200)
    const text = res.body.content[0].text as string
    expect(text).toContain("Where am I working?")
    expect(text).toContain("Primary working directory: /srv/app")
  })

  it("an image in a system turn is refused for the offline model, naming the block", async () => {
    const res = await send([
      { role: "user", content: "Hi" },
      { role: "system", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }
    ])
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
    expect(res.body.error.message).toContain("messages[1].content[0]")
  })
})
