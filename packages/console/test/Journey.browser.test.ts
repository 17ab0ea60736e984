/**
 * The console's whole path in one sitting, as the web console's evidence names it, in a real
 * browser against the real server on loopback: sign up → create an API key → create an org →
 * invite → set a policy and a member cap → a streamed huddle in single and then multi mode,
 * showing its stages and the report with a dissent, in one session → connect a repository and
 * follow a reference to its highlighted lines → the audit log shows the actions, filtered by
 * type. Each part is tested more closely in the other suites; this one checks they join up.
 */
import { join } from "node:path"
import { Accounts, Operator, TestServer } from "@huddle/testkit"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answers as answersOn, ask as askIn, checkPage, closePage, launch, type OpenPage, openPage, repositoryRoot, signUpAndLogIn } from "./browser.js"

const source = ["export const greet = (name: string) => {", "  const polite = `Hello, ${name}`", "  return polite", "}"]

describe("the console end to end", () => {
  let server: TestServer.TestServer
  let browser: Browser
  let opened: OpenPage
  let page: Page
  let repository: ReturnType<typeof repositoryRoot> | undefined
  let root: string

  beforeAll(async () => {
    repository = repositoryRoot({ "shop/src/greet.ts": `${source.join("\n")}\n` })
    root = repository.root
    ;[server, browser] = await Promise.all([TestServer.start({ starterCredits: 1000, grounding: repository.grounding }), launch()])
    opened = await openPage(browser, server.url)
    page = opened.page
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    repository?.remove()
  })

  const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name })
  const check = (name: string) => checkPage(page, name)
  const tab = (name: string) => page.getByRole("navigation", { name: "Acme Research" }).getByRole("link", { name })
  const ask = (text: string, mode: "Single" | "Multi" | "Auto") => askIn(page, text, mode)
  const answers = () => answersOn(page)

  it("goes from sign-up to a council's dissent, a cited file and the audit trail, in the browser alone", async () => {
    const adminEmail = Accounts.uniqueEmail("journey")
    const memberEmail = Accounts.uniqueEmail("journey-member")
    const password = "correct horse battery"

    // Sign up, log in, and make an API key.
    await signUpAndLogIn(page, server.url, adminEmail, password)
    await page.getByRole("link", { name: "API keys" }).click()
    await heading("API keys").waitFor()
    await page.getByLabel("Name").fill("journey")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = await page.getByLabel("Your new API key").inputValue()
    expect(key).toMatch(/^hk_/)
    expect((await server.request("GET", "/v1/me", { token: key })).body.user.email).toBe(adminEmail)
    await page.getByRole("button", { name: "I have saved it" }).click()

    // An organization, and an invitation.
    await page.getByRole("link", { name: "Organizations" }).click()
    await heading("Organizations").waitFor()
    await page.getByLabel("Name").fill("Acme Research")
    await page.getByRole("button", { name: "Create organization" }).click()
    await heading(/^Dashboard · Acme Research/).waitFor()
    const orgId = await page.getByLabel("Organization").inputValue()
    await tab("Members").click()
    await heading(/^Members/).waitFor()
    await page.getByLabel("Email").fill(memberEmail)
    await page.getByRole("button", { name: "Invite" }).click()
    await page.getByText(`Invited ${memberEmail}.`).waitFor()

    // A policy, shown before it is saved, then saved.
    await tab("Policies").click()
    await heading(/^Policies/).waitFor()
    await page.getByRole("group", { name: "Enforced policies" }).getByLabel("Model tier").selectOption("standard")
    await page.getByRole("heading", { name: "What members will get (not saved yet)" }).waitFor()
    expect(await page.getByRole("region", { name: /What members will get/ }).getByRole("row", { name: /^Model tier/ }).textContent()).toContain("Premium → Standard (enforced policy)")
    await page.getByRole("button", { name: "Save policies and defaults" }).click()
    await page.getByText("Saved. Members' next requests follow these settings.").waitFor()

    // The member signs up (elsewhere) and so joins; the admin caps their spending.
    expect((await server.request("POST", "/v1/auth/signup", { body: { email: memberEmail, password } })).status).toBe(201)
    await tab("Members").click()
    const memberRow = page.getByRole("row", { name: new RegExp(memberEmail) })
    await expect.poll(() => memberRow.textContent()).not.toContain("invited")
    await memberRow.getByRole("button", { name: `Spending cap of ${memberEmail}` }).click()
    await memberRow.getByLabel("Credits").fill("40")
    await memberRow.getByRole("button", { name: "Save cap" }).click()
    await page.getByText(`${memberEmail} may now take 40 credits a month from the pool.`).waitFor()
    const memberSession = (await server.request("POST", "/v1/auth/login", { body: { email: memberEmail, password } })).body.token as string
    expect((await server.request("GET", `/v1/orgs/${orgId}/credits`, { token: memberSession })).body.cap).toEqual({ amount: 40, period: "month" })

    // The operator funds the pool; the admin's conversation runs in the org.
    await Operator.grant(server, { org_id: orgId, balance: "subscription" }, 1000, "plan")
    await page.getByRole("link", { name: "Conversations" }).click()
    await page.getByRole("link", { name: "Start a conversation" }).click()
    await heading("New conversation").waitFor()
    await ask("Explain how a B-tree index speeds up a range query.", "Single")
    await expect.poll(() => answers().count(), { timeout: 20_000 }).toBe(1)
    expect(await answers().first().textContent()).toContain("answered in Single mode")
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/)
    const sessionUrl = page.url()

    // The same session, switched to multi: the council's stages, and its report with the dissent apart.
    await ask("Should we use PostgreSQL or MySQL for our analytics workload?", "Multi")
    await expect.poll(() => answers().count(), { timeout: 30_000 }).toBe(2)
    const council = answers().nth(1)
    expect(await council.textContent()).toContain("answered in Multi mode")
    const report = council.getByRole("region", { name: "Council report" })
    expect(await report.locator(".agreement").textContent()).toMatch(/^\d+% agreement/)
    expect(await report.getByRole("list", { name: "Dissents" }).getByRole("listitem").first().textContent()).toMatch(/Dissent from seat \d/)
    await council.getByText("How this answer was made").click()
    expect((await council.locator(".stages li").allTextContents()).join("\n")).toContain("Council round 4: ratification: done")
    await check("journey-council")

    // A repository, connected and indexed; a question about it in the same session; its reference, followed.
    await page.getByRole("link", { name: "Repositories" }).click()
    await heading("Repositories").waitFor()
    await page.getByLabel("Directory", { exact: true }).first().fill(join(root, "shop"))
    await page.getByRole("button", { name: "Connect a repository" }).first().click()
    await page.getByText("Indexed", { exact: true }).first().waitFor({ timeout: 30_000 })
    await page.goto(sessionUrl)
    await expect.poll(() => answers().count()).toBe(2)
    await ask("Where is greet defined in src/greet.ts?", "Single")
    const reference = page.locator('.message a[href*="#/files/"]').first()
    await reference.waitFor({ timeout: 20_000 })
    await reference.click()
    await heading("src/greet.ts").waitFor()
    await page.locator(".line.cited").first().waitFor()
    expect(await page.locator(".line.cited mark").allTextContents()).toContain(source[0])
    await check("journey-cited-file")
    const stored = (await server.request("GET", `/v1/huddle/sessions/${decodeURIComponent(sessionUrl.split("/").at(-1)!)}`, { token: key })).body
    expect(stored.messages.map((m: { mode: string }) => m.mode)).toEqual(["single", "single", "multi", "multi", "single", "single"])

    // The audit log: the admin's actions, then only the invitations.
    await page.getByRole("link", { name: "Organizations" }).click()
    await page.getByRole("link", { name: "Acme Research" }).click()
    await heading(/^Dashboard · Acme Research/).waitFor()
    await tab("Audit log").click()
    await heading(/^Audit log/).waitFor()
    const rows = page.locator("table.audit tbody tr")
    await expect.poll(() => page.locator("table.audit").textContent()).toContain("Spending cap changed")
    const all = await page.locator("table.audit").textContent()
    for (const what of ["Organization created", "Member invited", "Member joined", "Policies changed", "Credits granted"]) expect(all).toContain(what)
    // Who acted, by name: the admin is "You", the member their email, the operator's grant the operator's.
    const by = (what: string) => rows.filter({ hasText: what }).first().locator('td[data-label="By"]').textContent()
    expect(await by("Spending cap changed")).toBe("You")
    expect(await by("Member joined")).toBe(memberEmail)
    expect(await by("Credits granted")).toBe("The operator")
    await page.getByLabel("Type").selectOption("member.invited")
    await expect.poll(() => page.url()).toContain("type=member.invited")
    await expect.poll(() => rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain(memberEmail)
    await check("journey-audit")
    // Nothing went wrong in the page on the way (script or console errors, requests elsewhere).
    await closePage(opened)
  })
})
