/**
 * What the documentation says about errors is what the server answers: the three error shapes
 * (REST envelope, OpenAI's envelope, JSON-RPC error objects) shown in the API reference's
 * introduction and in the README are real answers, compared with the server's own.
 */
import { readFileSync } from "node:fs"
import { Accounts, TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")

/** The JSON objects written as code spans (`{…}`) in a text. */
const jsonSpans = (text: string): Array<string> => [...text.matchAll(/`(\{[^`]*\})`/g)].map((match) => match[1]!)

describe("the documented error shapes", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.stop())

  it("are the server's answers, in the API reference and in the README", async () => {
    const user = await Accounts.signupAndLogin(server)
    const answers = {
      rest: (await server.request("GET", "/v1/me")).text,
      openai: (await server.request("POST", "/v1/chat/completions", { body: { model: "standard", messages: [] } })).text,
      jsonRpc: (await server.request("POST", "/v1/rpc", { token: user.session, body: { jsonrpc: "2.0", method: "nope", id: 1 } })).text
    }
    const document = (await server.request("GET", "/v1/openapi.json")).body
    for (const [where, text] of [["the API reference", document.info.description as string], ["the README", readme]] as const) {
      const shown = jsonSpans(text).filter((span) => span.startsWith("{\"error\"") || span.startsWith("{\"jsonrpc\""))
      expect(shown, where).toHaveLength(3)
      expect(shown.map((span) => JSON.parse(span)), where).toEqual(
        [answers.rest, answers.openai, answers.jsonRpc].map((answer) => JSON.parse(answer))
      )
    }
  })
})
