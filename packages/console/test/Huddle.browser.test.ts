/**
 * Conversations in the console, end to end in a real browser against the real server (offline
 * models, no provider): a new user asks a question in single mode and sees the answer's text
 * before the stream has ended; asks the council a contested question in the same session and
 * sees its rounds go by, then the report with the dissent set apart; asks in auto mode; finds
 * the conversation in the list, renames it and deletes it. The refusals (402 with the balance,
 * 429 with the wait, a policy denial) are said in words a person can act on; messages held for
 * review are approved or rejected, and an admin approves a member's held message from the org's
 * queue; a degraded council run is marked, with who was dropped.
 */
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import type { Browser, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { answers as answersOn, ask as askIn, checkPage, closePage, laptop, launch, type OpenPage, openPage, openSignedIn, signUpAndLogIn } from "./browser.js"

const starterCredits = 1000
const phone = { width: 390, height: 844 }
const contested = "Should we use PostgreSQL or MySQL for our analytics workload?"

/**
 * Runs in the page before its own script (through the debugging protocol, which the content
 * security policy does not govern): while `__holdStream` is set, a streamed answer is let through
 * up to its `metadata` event and held there until `__releaseStream()`, so the test can look at
 * the page while the answer is still arriving.
 */
const holdStreams = () => {
  const w = window as unknown as { __holdStream: boolean; __releaseStream: () => void; __held: boolean }
  const original = window.fetch.bind(window)
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  w.__holdStream = false
  w.__held = false
  window.fetch = async (input, init) => {
    const response = await original(input, init)
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
    if (!w.__holdStream || !url.includes("stream=true") || response.body === null) return response
    const held = new Promise<void>((resolve) => (w.__releaseStream = resolve))
    const reader = response.body.getReader()
    let seen = ""
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) return controller.close()
        const text = decoder.decode(value, { stream: true })
        const at = seen === "" || !seen.includes("event: metadata") ? text.indexOf("event: metadata") : -1
        seen += text
        if (at < 0) return controller.enqueue(encoder.encode(text))
        controller.enqueue(encoder.encode(text.slice(0, at)))
        w.__held = true
        await held
        controller.enqueue(encoder.encode(text.slice(at)))
      }
    })
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

describe("conversations in the web console", () => {
  let server: TestServer.TestServer
  let browser: Browser
  let opened: OpenPage
  let page: Page

  beforeAll(async () => {
    ;[server, browser] = await Promise.all([TestServer.start({ starterCredits }), launch()])
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  beforeEach(async () => {
    opened = await openPage(browser, server.url, { initScript: holdStreams })
    page = opened.page
  })
  afterEach(() => closePage(opened))

  const check = (name: string) => checkPage(page, name)
  const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name })
  const hold = (on: boolean) => page.evaluate((value) => (window as unknown as { __holdStream: boolean }).__holdStream = value, on)
  const isHeld = () => page.evaluate(() => (window as unknown as { __held: boolean }).__held)
  const release = () =>
    page.evaluate(() => {
      const w = window as unknown as { __held: boolean; __releaseStream: () => void }
      w.__held = false
      w.__releaseStream()
    })
  const ask = (text: string, mode: "Single" | "Multi" | "Auto") => askIn(page, text, mode)
  const answers = () => answersOn(page)

  const newUser = () => signUpAndLogIn(page, server.url, Accounts.uniqueEmail("huddle-console"), "correct horse battery")

  it("streams a single answer, then a council with its rounds and a dissent, then auto mode, in one session that the list shows", async () => {
    await newUser()
    await page.getByRole("link", { name: "Conversations" }).click()
    await heading("Conversations").waitFor()
    await page.getByText("No conversations yet").waitFor()
    await check("huddle-sessions-empty")

    await page.getByRole("link", { name: "Start a conversation" }).click()
    await heading("New conversation").waitFor()
    await check("huddle-new")

    // Single mode: the text is on the page while the stream is still open.
    await hold(true)
    await ask("Explain how a B-tree index speeds up a range query.", "Single")
    await expect.poll(isHeld).toBe(true)
    const streamed = page.locator(".live .streamed")
    await expect.poll(async () => ((await streamed.textContent()) ?? "").length).toBeGreaterThan(20)
    expect(await page.getByText("Huddle is answering…").isVisible()).toBe(true)
    expect(await page.getByRole("button", { name: "Answering…" }).isDisabled()).toBe(true)
    const partial = (await streamed.textContent())!
    await release()
    await expect.poll(() => answers().count()).toBe(1)
    const first = answers().first()
    expect(await first.locator(".text").textContent()).toBe(partial)
    expect(await first.textContent()).toContain("answered in Single mode")
    await expect.poll(() => first.locator(".charged").textContent()).toMatch(/^\d+ credits? charged$/)
    // The address is the session's now; a reload shows the same conversation.
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/)
    const sessionUrl = page.url()
    const sessionId = decodeURIComponent(sessionUrl.split("/").at(-1)!)
    await check("huddle-single")

    // Multi mode in the same session: the council's rounds appear as they pass.
    await ask(contested, "Multi")
    await expect.poll(isHeld).toBe(true)
    const stages = page.locator(".live .stages li")
    const liveStages = (await stages.allTextContents()).join("\n")
    expect(liveStages).toContain("Council round 1: proposals: started")
    expect(liveStages).toMatch(/Council round 2: critique: Seat 1 \(.+\) answered/)
    expect(liveStages).toContain("Council round 4: ratification: done")
    await check("huddle-multi-streaming")
    await release()
    await expect.poll(() => answers().count()).toBe(2)
    const council = answers().nth(1)
    expect(await council.textContent()).toContain("answered in Multi mode")
    const report = council.getByRole("region", { name: "Council report" })
    expect(await report.locator(".agreement").textContent()).toMatch(/^\d+% agreement: \d of \d ratifying participants endorsed/)
    // The dissent is apart from the consensus: the dissenter's claim and its rationale.
    const dissent = report.getByRole("list", { name: "Dissents" }).getByRole("listitem").first()
    const dissentText = (await dissent.textContent())!
    expect(dissentText).toMatch(/Dissent from seat \d/)
    expect(dissentText).toContain("[offline]")
    const consensus = (await report.locator(".consensus").textContent())!.replace("Consensus: ", "")
    expect(dissentText).not.toContain(consensus)
    // Each participant's initial and final position.
    const rows = await report.locator("table.participants tbody tr").allTextContents()
    expect(rows).toHaveLength(3)
    expect(rows[0]).toContain("PostgreSQL is the better choice.")
    expect(rows[1]).toContain("MySQL is the better choice.")
    expect(await report.textContent()).not.toContain("Degraded run")
    // What the stream showed stays with the answer.
    await council.getByText("How this answer was made").click()
    expect(await council.locator(".stages li").count()).toBeGreaterThan(8)
    await check("huddle-multi-report")
    await page.setViewportSize(phone)
    await check("huddle-multi-report-phone")
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true)
    await page.setViewportSize(laptop)

    // Auto mode decides, and says why.
    await hold(false)
    await ask(contested, "Auto")
    await expect.poll(() => answers().count()).toBe(3)
    expect(await answers().nth(2).textContent()).toContain("answered in Multi mode (auto: two independent answers disagreed)")
    const stored = (await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: await token() })).body
    expect(stored.messages.map((m: { mode: string }) => m.mode)).toEqual(["single", "single", "multi", "multi", "auto", "multi"])

    // The list shows it; rename it, open it, delete it.
    await page.getByRole("link", { name: "All conversations" }).click()
    await heading("Conversations").waitFor()
    const row = page.getByRole("listitem").filter({ has: page.getByRole("link", { name: /B-tree/ }) })
    await row.waitFor()
    await check("huddle-sessions")
    await row.getByRole("button", { name: /^Rename/ }).click()
    await page.getByLabel(/^New title for/).fill("Index questions")
    await page.getByLabel(/^New title for/).press("Enter")
    await page.getByText("Renamed to “Index questions”.").waitFor()
    await page.getByRole("link", { name: "Index questions" }).click()
    await heading("Index questions").waitFor()
    expect(page.url()).toBe(sessionUrl)
    expect(await answers().count()).toBe(3)
    await page.getByRole("link", { name: "All conversations" }).click()
    await page.getByRole("button", { name: "Delete Index questions" }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel")
    await page.getByRole("button", { name: "Delete conversation" }).click()
    await page.getByText("No conversations yet").waitFor()
    expect((await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: await token() })).status).toBe(404)
  })

  const token = async () => (await page.evaluate(() => sessionStorage.getItem("huddle.session")))!

  it("says what a refusal means: the balance after a 402, the wait after a 429, the policy after a 403", async () => {
    const user = await Accounts.signupAndLogin(server, "huddle-refusals")
    await openSignedIn(page, server.url, user.session, "sessions/new")
    await heading("New conversation").waitFor()

    const refuse = (status: number, body: object, headers: Record<string, string> = {}) =>
      page.route("**/v1/huddle?stream=true", (route) =>
        route.fulfill({ status, contentType: "application/json", headers, body: JSON.stringify(body) }))

    await refuse(402, { error: "INSUFFICIENT_CREDITS", message: "The credit balance cannot cover this request (1200 credits needed)" })
    await ask("How do I rotate a key?", "Single")
    await expect.poll(() => page.getByRole("alert").textContent()).toBe(
      "Not enough credits. The credit balance cannot cover this request (1200 credits needed). Your balance is 1,000 credits."
    )
    // The question stays in the box, to send again.
    expect(await page.getByLabel("Your question").inputValue()).toBe("How do I rotate a key?")
    await check("huddle-refused-402")
    await page.unroute("**/v1/huddle?stream=true")

    await refuse(429, { error: "RATE_LIMITED", message: "Too many requests" }, { "retry-after": "17" })
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Too many requests just now. Wait 17 seconds and send it again.")
    await page.unroute("**/v1/huddle?stream=true")

    await refuse(403, { error: "POLICY_VIOLATION", message: "The organization's policy does not allow the premium tier" })
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe(
      "Your organization's policy does not allow this: The organization's policy does not allow the premium tier"
    )
    await page.unroute("**/v1/huddle?stream=true")

    // Blank is refused before sending, in the contract's words.
    await page.getByLabel("Your question").fill("   ")
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Your message must not be blank.")
  })

  it("holds a message for review when automatic execution is off, and runs it on approval or drops it on rejection", async () => {
    const user = await Accounts.signupAndLogin(server, "huddle-review")
    expect((await server.request("PUT", "/v1/me/preferences", { token: user.session, body: { auto_execute: false } })).status).toBe(200)
    await openSignedIn(page, server.url, user.session, "sessions/new")
    await heading("New conversation").waitFor()

    await ask("Draft the agenda for Monday", "Single")
    await page.getByText("This message awaits review: nothing runs or is charged until it is approved.").waitFor()
    expect(await answers().count()).toBe(0)
    const conversation = page.url()
    await ask("Delete last week's notes", "Single")
    await expect.poll(() => page.locator(".message.from-user").count()).toBe(2)

    await page.getByRole("link", { name: "Review it" }).click()
    await heading("Reviews").waitFor()
    await page.getByRole("button", { name: "Approve “Draft the agenda for Monday”" }).waitFor()
    await check("huddle-reviews")
    await page.getByRole("button", { name: "Approve “Draft the agenda for Monday”" }).click()
    await expect.poll(() => page.getByRole("status").last().textContent()).toMatch(/^Approved and answered: \d+ credits? charged\.$/)
    await page.getByRole("button", { name: "Reject “Delete last week's notes”" }).click()
    await page.getByText("Rejected: it will not run, and nothing was charged.").waitFor()
    await page.getByText("Nothing awaits review.").waitFor()

    const intents = await server.request("POST", "/v1/rpc", {
      token: user.session,
      body: { jsonrpc: "2.0", method: "intent.list", params: {}, id: 1 }
    })
    expect(intents.body.result.data.map((i: { input: string; status: string }) => [i.input, i.status])).toEqual([
      ["Delete last week's notes", "rejected"],
      ["Draft the agenda for Monday", "completed"]
    ])
    // The approved answer is in the conversation.
    await page.goto(conversation)
    await expect.poll(() => answers().count()).toBe(1)
  })

  it("shows an admin working in their org the messages its members sent that await review, and runs one they approve", async () => {
    const org = await Orgs.createOrg(server)
    expect((await server.request("PUT", `/v1/orgs/${org.id}/admin/policies`, { token: org.admin.session, body: { auto_execute: false } })).status).toBe(200)
    const member = await Orgs.addMember(server, org)
    const held = await server.request("POST", "/v1/huddle", { token: member.session, body: { input: "Draft the quarterly plan", org_id: org.id } })
    expect(held.body.status, held.text).toBe("awaiting_review")
    await openSignedIn(page, server.url, org.admin.session, "reviews")
    await heading("Reviews").waitFor()

    const queue = page.getByRole("region", { name: "Awaiting review in Acme Research" })
    const item = queue.getByRole("listitem").filter({ hasText: "Draft the quarterly plan" })
    await item.waitFor()
    expect(await item.locator(".submitter").textContent()).toBe(`From ${member.email}`)
    // Not the admin's conversation: no link to it.
    expect(await item.getByRole("link", { name: "its conversation" }).count()).toBe(0)
    await check("huddle-reviews-org")
    await item.getByRole("button", { name: "Approve “Draft the quarterly plan”" }).click()
    await expect.poll(() => queue.getByRole("status").textContent()).toMatch(/^Approved and answered: \d+ credits? charged\.$/)
    await queue.getByText("Nothing in Acme Research awaits review.").waitFor()

    // The member's conversation has its answer.
    const session = await server.request("GET", `/v1/huddle/sessions/${held.body.session_id}`, { token: member.session })
    expect(session.body.messages.map((message: { role: string }) => message.role)).toEqual(["user", "assistant"])
  })

  it("marks a degraded council run and names who was dropped, in which round and why", async () => {
    const user = await Accounts.signupAndLogin(server, "huddle-degraded")
    const reply = (await server.request("POST", "/v1/huddle", { token: user.session, body: { input: contested, mode: "multi" } })).body
    const path = `/v1/huddle/sessions/${reply.session_id}`
    const stored = (await server.request("GET", path, { token: user.session })).body
    // The offline council never drops anyone: the stored session is answered as if seat 3 had timed out.
    const answer = stored.messages.at(-1)
    const [one, two, three] = answer.consensus.participants
    answer.consensus = {
      ...answer.consensus,
      participants: [one, two, { ...three, vote: "dropped", endorsed: null, position: null }],
      dropped: [{ seat: 3, model: three.model, round: "critique", reason: "timed out after 30s" }],
      degraded: true,
      degraded_reasons: ["2 of 3 planned participants finished"]
    }
    await page.route(`**${path}`, (route) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(stored) }))
    await openSignedIn(page, server.url, user.session, `sessions/${reply.session_id}`)
    const report = page.getByRole("region", { name: "Council report" })
    await report.waitFor()
    expect(await report.locator(".degraded").textContent()).toBe("Degraded run. 2 of 3 planned participants finished")
    expect(await report.getByRole("list", { name: "Dropped participants" }).textContent())
      .toBe(`Seat 3 (${three.model}) dropped in the critique round: timed out after 30s`)
    expect(await report.locator("table.participants tbody tr").nth(2).textContent()).toContain("Dropped")
    await check("huddle-degraded")
  })
})
