/**
 * Organizations in the web console, in a real browser against the real server on loopback: an
 * admin creates an org, invites a member who then joins (and withdraws a mistaken invitation,
 * and is refused stepping down as the last admin), sets a policy (seeing what members will get
 * before saving) and the member's spending cap, and switches between two orgs; the member's requests over HTTP are
 * refused past the cap, and so is the member's conversation in the console, the members page shows what they spent, and the audit log shows it all,
 * filtered by type. A member who chooses Personal in the header has their conversation charged to
 * their own credits, the org's pool untouched, and the org pages say no org is chosen. And at scale: with 2,000 members and 100,000 audit events, the members page
 * and the audit log each open with at most 3 API requests (their first page rendered; the time
 * is reported, not asserted).
 */
import { Accounts, Operator, Orgs, TestServer } from "@huddle/testkit"
import type { Browser, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { checkPage, closePage, laptop, launch, type OpenPage, openPage, openSignedIn, screenshot, signUpAndLogIn } from "./browser.js"

const phone = { width: 390, height: 844 }

let browser: Browser
beforeAll(async () => {
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
})

describe("organizations in the web console", () => {
  let server: TestServer.TestServer
  let opened: OpenPage
  let page: Page

  beforeAll(async () => {
    // No starter credits: what a member spends in the org comes from the pool the operator funds.
    server = await TestServer.start({ starterCredits: 0 })
  })
  afterAll(async () => {
    await server?.stop()
  })
  /** A new tab, for the test's next person. */
  const newTab = async () => {
    opened = await openPage(browser, server.url)
    page = opened.page
  }
  beforeEach(newTab)
  afterEach(() => closePage(opened))

  const check = (name: string) => checkPage(page, name)
  const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name })
  const tab = (name: string) => page.getByRole("navigation", { name: "Acme Research" }).getByRole("link", { name })

  it("lets an admin create an org, invite a member, set a policy and a cap that is enforced, and read it all in the audit log", async () => {
    const adminEmail = Accounts.uniqueEmail("admin")
    const memberEmail = Accounts.uniqueEmail("member")
    const password = "correct horse battery"

    // Sign up and log in as the admin-to-be.
    await signUpAndLogIn(page, server.url, adminEmail, password)

    // No org yet: the org pages say so and lead to creating one.
    await page.getByRole("link", { name: "Organizations" }).click()
    await heading("Organizations").waitFor()
    await page.getByText("You do not belong to an organization yet.").waitFor()
    await check("orgs-empty")
    await page.getByRole("button", { name: "Create organization" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("name must not be empty")
    await page.getByLabel("Name").fill("Acme Research")
    await page.getByRole("button", { name: "Create organization" }).click()

    await heading(/^Dashboard · Acme Research/).waitFor()
    expect(await page.getByLabel("Organization").inputValue()).toMatch(/^org_/)
    const orgId = await page.getByLabel("Organization").inputValue()
    expect(await page.evaluate(() => sessionStorage.getItem("huddle.org"))).toBe(orgId)
    await page.getByText("1 active, 0 invited").waitFor()
    await check("org-dashboard")

    // Invite the member by email: listed as invited until they sign up.
    await tab("Members").click()
    await heading(/^Members/).waitFor()
    await page.getByLabel("Email").fill(memberEmail)
    await page.getByRole("button", { name: "Invite" }).click()
    await page.getByText(`Invited ${memberEmail}.`).waitFor()
    const memberRow = page.getByRole("row", { name: new RegExp(memberEmail) })
    expect(await memberRow.textContent()).toContain("invited")
    await check("members-invited")

    // The last admin cannot step down: the server's refusal is said, and the role stays.
    const adminRow = page.getByRole("row", { name: new RegExp(adminEmail) })
    await adminRow.getByLabel(`Role of ${adminEmail}`).selectOption("member")
    await expect.poll(() => adminRow.getByRole("alert").textContent()).toBe("An organization must keep at least one admin")
    expect(await adminRow.getByLabel(`Role of ${adminEmail}`).inputValue()).toBe("admin")

    // An invitation sent by mistake is withdrawn, after a confirmation that starts on Cancel.
    const mistaken = Accounts.uniqueEmail("mistake")
    await page.getByLabel("Email").fill(mistaken)
    await page.getByRole("button", { name: "Invite" }).click()
    const mistakenRow = page.getByRole("row", { name: new RegExp(mistaken) })
    await mistakenRow.getByRole("button", { name: `Remove ${mistaken}` }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel")
    await check("members-confirm-remove")
    await mistakenRow.getByRole("button", { name: "Remove member" }).click()
    await page.getByText(`Removed ${mistaken}.`).waitFor()
    expect(await mistakenRow.count()).toBe(0)

    // The member signs up with that address, and so joins; they call Huddle with a key of the org.
    const signup = await server.request("POST", "/v1/auth/signup", { body: { email: memberEmail, password } })
    expect(signup.status).toBe(201)
    const memberId = signup.body.user.id as string
    const memberSession = (await server.request("POST", "/v1/auth/login", { body: { email: memberEmail, password } })).body.token as string
    const key = await server.request("POST", "/v1/api-keys", { token: memberSession, body: { name: "member's laptop", org_id: orgId } })
    expect(key.status).toBe(201)
    await Operator.grant(server, { org_id: orgId, balance: "subscription" }, 1000, "plan for November")

    // A policy: economy at most. Before saving, the preview says what members will get.
    await tab("Policies").click()
    await heading(/^Policies/).waitFor()
    const preview = page.getByRole("region", { name: /What members will get/ })
    const previewRow = (setting: string) => preview.getByRole("row", { name: new RegExp(`^${setting}`) })
    await expect.poll(() => previewRow("Model tier").textContent()).toContain("Standard (Huddle's default)")
    await page.getByRole("group", { name: "Enforced policies" }).getByLabel("Model tier").selectOption("economy")
    await page.getByRole("group", { name: "Default preferences" }).getByLabel("Huddle mode").selectOption("multi")
    await page.getByRole("heading", { name: "What members will get (not saved yet)" }).waitFor()
    const tierRow = await previewRow("Model tier").textContent()
    expect(tierRow).toContain("Economy (enforced policy)")
    // A member who prefers premium is lowered to the ceiling; one who prefers economy keeps it.
    expect(tierRow).toContain("Premium → Economy (enforced policy)")
    expect(await previewRow("Huddle mode").textContent()).toContain("Multi (org default)")
    expect(await previewRow("Huddle mode").textContent()).toContain("Single → Single (their own preference)")
    await check("policies-preview")
    // Nothing is saved until the admin says so.
    expect((await server.request("GET", `/v1/orgs/${orgId}/policies`, { token: memberSession })).body).toEqual({})
    await page.getByRole("button", { name: "Save policies and defaults" }).click()
    await page.getByText("Saved. Members' next requests follow these settings.").waitFor()
    expect((await server.request("GET", `/v1/orgs/${orgId}/policies`, { token: memberSession })).body).toEqual({ model_tier: "economy" })

    // The member joined; the admin caps what they may take from the pool.
    await tab("Members").click()
    await heading(/^Members/).waitFor()
    await expect.poll(() => memberRow.textContent()).not.toContain("invited")
    await memberRow.getByRole("button", { name: `Spending cap of ${memberEmail}` }).click()
    await memberRow.getByLabel("Credits").fill("6")
    await memberRow.getByRole("button", { name: "Save cap" }).click()
    await page.getByText(`${memberEmail} may now take 6 credits a month from the pool.`).waitFor()
    expect(await memberRow.textContent()).toContain("6 credits a month")
    await check("members-capped")

    // The member's requests with their key: served from the pool until the cap refuses one. Each
    // asks for a single answer (the request's mode comes before the org's default of multi).
    const ask = () => server.request("POST", "/v1/huddle", { token: key.body.key, body: { input: "Summarise our week.", mode: "single" } })
    const first = await ask()
    expect(first.status, first.text).toBe(200)
    expect(first.body.settings?.model_tier ?? first.body.policy?.model_tier).toEqual({ value: "economy", decided_by: "org_policy" })
    let refused: TestServer.Response | undefined
    for (let i = 0; i < 10 && refused === undefined; i++) {
      const res = await ask()
      if (res.status === 402) refused = res
      else expect(res.status).toBe(200)
    }
    expect(refused?.body).toEqual({ error: "INSUFFICIENT_CREDITS", message: expect.stringMatching(/spending cap .*6 credits a month/) })
    const members = await server.request("GET", `/v1/orgs/${orgId}/admin/members`, { token: (await login(adminEmail, password)) })
    const spent = members.body.data.find((member: { user_id: string | null }) => member.user_id === memberId).spent.month as number
    expect(spent).toBeGreaterThan(0)
    expect(spent).toBeLessThanOrEqual(6)

    // The members page shows what the member spent.
    await page.reload()
    await memberRow.waitFor()
    expect(await memberRow.getByRole("cell").nth(2).textContent()).toBe(`${spent} ${spent === 1 ? "credit" : "credits"}`)
    await page.setViewportSize(phone)
    await check("members-phone")
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true)
    await page.setViewportSize(laptop)

    // The audit log: every action, and filtered by type.
    await tab("Audit log").click()
    await heading(/^Audit log/).waitFor()
    const rows = page.locator("table.audit tbody tr")
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(6)
    const all = await page.locator("table.audit").textContent()
    for (const what of ["Organization created", "Member invited", "Member joined", "Policies changed", "Default preferences changed", "Spending cap changed", "Request refused for credits", "Credits granted"]) {
      expect(all).toContain(what)
    }
    await page.getByLabel("Type").selectOption("credits.cap_changed")
    await expect.poll(() => page.url()).toContain("type=credits.cap_changed")
    await expect.poll(() => rows.first().textContent()).toContain(`${memberEmail}: no cap → 6 credits a month`)
    expect(await rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain("You")
    await page.getByLabel("Type").selectOption("policy.updated")
    await expect.poll(() => rows.first().textContent()).toContain("model tier: unset → economy")
    expect(await rows.count()).toBe(1)
    await check("audit-filtered")
    // A first day after today leaves nothing.
    await page.getByLabel("From (UTC day)").fill("2999-01-01")
    await page.getByText("No events match these filters.").waitFor()

    // The credit pool: balances and the grant received; no button to grant.
    await tab("Credits").click()
    await heading(/^Credits/).waitFor()
    const grants = page.getByRole("region", { name: "Grants received" })
    await grants.getByText("1,000 credits to the subscription pool: plan for November").waitFor()
    expect(await page.getByRole("button", { name: /grant/i }).count()).toBe(0)
    await check("pool")

    // A second org: the header switches between them, and the choice is kept for the tab.
    await page.getByRole("link", { name: "Organizations" }).click()
    await page.getByLabel("Name").fill("Beta Lab")
    await page.getByRole("button", { name: "Create organization" }).click()
    await heading(/^Dashboard · Beta Lab/).waitFor()
    await page.getByLabel("Organization").selectOption(orgId)
    await heading(/^Dashboard · Acme Research/).waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem("huddle.org"))).toBe(orgId)
    await page.reload()
    await heading(/^Dashboard · Acme Research/).waitFor()

    // The member, in the console (a tab of their own): the admins' pages say so, and the policies read as enforced.
    await closePage(opened)
    await newTab()
    await openSignedIn(page, server.url, memberSession, "members", orgId)
    await page.getByText("Only admins of Acme Research can see this page.").waitFor()
    await check("members-only-admins")
    await page.getByRole("link", { name: "Policies" }).click()
    await heading(/^Policies/).waitFor()
    await page.getByText("Economy").waitFor()

    // A conversation of the member's runs in the org they work in; past their cap, the console says so.
    await page.goto(`${server.url}/#/sessions/new`)
    await page.getByText("In Acme Research: its policies and memories apply.").waitFor()
    await page.getByLabel(/^Your (question|message)$/).fill("One more question, please")
    await page.getByRole("button", { name: "Send" }).click()
    await page.getByText(/Not enough credits\. .*spending cap on the organization's pool \(6 credits a month\)/).waitFor()
    await check("member-capped-conversation")
  })

  it("lets a member work personally: the conversation is charged to their own credits, the org's pool stays as it was, the org pages say none is chosen", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    await Operator.grant(server, { org_id: org.id, balance: "subscription" }, 500, "plan")
    await Operator.grant(server, { user_id: member.id }, 100, "their own")
    await openSignedIn(page, server.url, member.session, "sessions/new")
    await heading("New conversation").waitFor()
    // A member works in their org until they choose otherwise.
    await page.getByText("In Acme Research: its policies and memories apply.").waitFor()

    await page.getByLabel("Organization").selectOption({ label: "Personal" })
    await page.getByText("A personal conversation: your own credits and memories.").waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem("huddle.org"))).toBe("personal")
    await page.getByLabel(/^Your (question|message)$/).fill("What should I read this weekend?")
    await page.getByRole("radio", { name: /^Single/ }).check()
    await page.getByRole("button", { name: "Send" }).click()
    const charged = page.locator(".message.from-huddle:not(.live) .charged")
    await charged.waitFor()
    const cost = Number((await charged.textContent())?.match(/^(\d+) credits? charged$/)?.[1])
    expect(cost).toBeGreaterThan(0)
    // The conversation, as the server keeps it, is personal.
    await page.getByText("A personal conversation: your own credits and memories.").waitFor()
    const sessionId = page.url().split("/").at(-1)
    expect((await server.request("GET", `/v1/huddle/sessions/${sessionId}`, { token: member.session })).body.org_id).toBeNull()

    // Their account shows the charge; the choice outlives a reload.
    await page.getByRole("link", { name: "Account" }).click()
    await heading("Your account").waitFor()
    await page.reload()
    expect(await page.locator(".balance").textContent()).toBe(`${100 - cost} credits`)
    expect(await page.getByLabel("Organization").inputValue()).toBe("personal")

    // The org's pages say no org is chosen, rather than showing one.
    await page.goto(`${server.url}/#/pool`)
    await heading("Credits").waitFor()
    await page.getByText("No organization is chosen: you are working personally.").waitFor()
    await check("pool-personal")
    await page.getByRole("main").getByRole("link", { name: "Organizations" }).click()
    await page.getByText("You are working personally: your own credits, memories and workspace.").waitFor()

    // Back in the org: its pool did not move, and the member took nothing from it.
    await page.getByRole("button", { name: "Work in Acme Research" }).click()
    await heading(/^Dashboard · Acme Research/).waitFor()
    await page.goto(`${server.url}/#/pool`)
    await heading("Credits · Acme Research").waitFor()
    const facts = page.locator("dl.facts")
    await expect.poll(() => facts.textContent()).toContain("Subscription pool500 credits")
    expect(await facts.textContent()).toContain("You took from the pool0 credits this month, 0 credits in total")
    expect(await facts.textContent()).toContain(`Your personal balance${100 - cost} credits`)
  })

  const login = async (email: string, password: string): Promise<string> =>
    (await server.request("POST", "/v1/auth/login", { body: { email, password } })).body.token
})

describe("organization pages at scale", () => {
  const members = 2_000
  const events = 100_000
  const orgId = "org_scale"
  const adminEmail = "scale-admin@example.com"
  /**
   * Seeded in the fresh database before the server starts, in three set-based statements: the
   * members (users with an unusable password) and the audit events, older than anything the
   * test does. The admin is a pending invitation, so signing up makes them an admin of it.
   */
  const setupSql = `
    INSERT INTO users (id, email, password_hash, created_at)
      SELECT 'usr_scale_' || lpad(i::text, 5, '0'), 'member-' || lpad(i::text, 5, '0') || '@example.com', 'unusable', now() - interval '30 days'
      FROM generate_series(1, ${members}) AS i;
    INSERT INTO organizations (id, name, slug, created_by, created_at) VALUES ('${orgId}', 'Big Co', 'big-co', NULL, now() - interval '30 days');
    INSERT INTO memberships (org_id, email, user_id, role, status, invited_by, created_at, joined_at)
      SELECT '${orgId}', email, id, 'member', 'active', NULL, created_at, created_at FROM users WHERE id LIKE 'usr_scale_%'
      UNION ALL SELECT '${orgId}', '${adminEmail}', NULL, 'admin', 'pending', NULL, now() - interval '30 days', NULL;
    INSERT INTO audit_events (id, org_id, actor_id, event_type, target, details, created_at)
      SELECT 'aud_0scale' || lpad(i::text, 7, '0'), '${orgId}', 'usr_scale_' || lpad((1 + i % ${members})::text, 5, '0'),
             (ARRAY['member.role_changed', 'credits.cap_changed', 'policy.updated', 'credits.denied'])[1 + i % 4], NULL,
             jsonb_build_object('email', 'member-' || lpad((1 + i % ${members})::text, 5, '0') || '@example.com', 'from', 'member', 'to', 'admin'),
             now() - interval '20 days' + i * interval '1 second'
      FROM generate_series(1, ${events}) AS i;`

  let server: TestServer.TestServer
  let session: string

  beforeAll(async () => {
    const seeding = performance.now()
    server = await TestServer.start({ setupSql })
    console.log(`seeded ${members} members and ${events} audit events and started the server in ${Math.round(performance.now() - seeding)} ms`)
    const password = "correct horse battery"
    expect((await server.request("POST", "/v1/auth/signup", { body: { email: adminEmail, password } })).status).toBe(201)
    session = (await server.request("POST", "/v1/auth/login", { body: { email: adminEmail, password } })).body.token
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  /** Opens `route` in a new tab and measures until `rendered` holds: the API requests made, and the time. */
  const measure = async (route: string, rendered: string) => {
    const opened = await openPage(browser, server.url)
    const { page } = opened
    try {
      const requests: Array<string> = []
      page.on("request", (request) => {
        if (new URL(request.url()).pathname.startsWith("/v1/")) requests.push(`${request.method()} ${new URL(request.url()).pathname}`)
      })
      const started = performance.now()
      await openSignedIn(page, server.url, session, route, orgId)
      // The moment the first page is in the document, by the page's own clock (from navigation start).
      const inPage = await page.waitForFunction((selector) => document.querySelectorAll(selector).length >= 50 ? performance.now() : false, rendered, { polling: "raf", timeout: 30_000 })
      const inPageMs = Math.round((await inPage.jsonValue()) as number)
      const wallMs = Math.round(performance.now() - started)
      await screenshot(page, `scale-${route}`)
      return { requests, inPageMs, wallMs, page, opened }
    } catch (error) {
      await opened.context.close()
      throw error
    }
  }

  it("opens the members page of 2,000 members with at most 3 API requests", async () => {
    const { inPageMs, opened, page, requests, wallMs } = await measure("members", "table.members tbody tr")
    console.log(`members page (2,000 members): first page rendered ${inPageMs} ms after navigation start (${wallMs} ms wall clock), ${requests.length} API requests: ${requests.join(", ")}`)
    expect(requests.length).toBeLessThanOrEqual(3)
    expect(await page.getByRole("row", { name: /member-00001@example.com/ }).count()).toBe(1)
    await page.getByRole("button", { name: "Show more members" }).waitFor()
    await closePage(opened)
  })

  it("opens the audit log of 100,000 events with at most 3 API requests, and pages on", async () => {
    const { inPageMs, opened, page, requests, wallMs } = await measure("audit", "table.audit tbody tr")
    console.log(`audit log (100,000 events): first page rendered ${inPageMs} ms after navigation start (${wallMs} ms wall clock), ${requests.length} API requests: ${requests.join(", ")}`)
    expect(requests.length).toBeLessThanOrEqual(3)
    const rows = page.locator("table.audit tbody tr")
    const firstOfPage = () => rows.first().textContent()
    const before = await firstOfPage()
    await page.getByRole("button", { name: "Next page" }).click()
    await page.getByText("Page 2: 50 events.").waitFor()
    expect(await firstOfPage()).not.toBe(before)
    await page.getByRole("button", { name: "Previous page" }).click()
    await page.getByText("Page 1: 50 events.").waitFor()
    expect(await firstOfPage()).toBe(before)
    await closePage(opened)
  })
})
