/**
 * Memories, repositories, the file view and the account's charges, in a real browser against the
 * real server on loopback: a new user creates, edits and deletes a memory; connects a directory
 * under the server's roots and watches it indexed, with what was skipped, why and which paths; opens a file
 * at cited lines and sees them highlighted and in view; and after one huddle message sees the
 * charge on the account page. Someone else opening the same file's address is told there is no
 * such file. Every page passes axe-core and reads on a phone.
 */
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts, Orgs, TestServer } from "@huddle/testkit"
import type { Browser, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { checkPage, closePage, laptop, launch, type OpenPage, openPage, openSignedIn, repositoryRoot, signUpAndLogIn } from "./browser.js"

const phone = { width: 390, height: 844 }

const app = ["export const greet = (name: string) => {", "  const polite = `Hello, ${name}`", "  return polite", "}", "", "export const bye = 1"]
const long = Array.from({ length: 300 }, (_, i) => `// line ${i + 1} of the long file`)

describe("memories, repositories, the file view and charges in the console", () => {
  let server: TestServer.TestServer
  let browser: Browser
  let opened: OpenPage
  let page: Page
  let repository: ReturnType<typeof repositoryRoot> | undefined
  let root: string

  beforeAll(async () => {
    repository = repositoryRoot({
      "repo/src/app.ts": `${app.join("\n")}\n`,
      "repo/src/long.ts": `${long.join("\n")}\n`,
      "repo/README.md": "# A small project\n",
      "repo/logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01])
    })
    root = repository.root
    ;[server, browser] = await Promise.all([TestServer.start({ starterCredits: 1000, grounding: repository.grounding }), launch()])
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    repository?.remove()
  })

  beforeEach(async () => {
    opened = await openPage(browser, server.url)
    page = opened.page
  })
  afterEach(() => closePage(opened))

  /** Checks the page as it is, on a laptop and on a phone: accessible, no sideways scrolling, kept as screenshots. */
  const check = async (name: string) => {
    await checkPage(page, name)
    await page.setViewportSize(phone)
    await checkPage(page, `${name}-phone`)
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${name} fits a phone`).toBe(true)
    await page.setViewportSize(laptop)
  }

  const heading = (name: string) => page.getByRole("heading", { level: 1, name })


  it("takes a new user through memories, a connected repository, a cited file and a charge", async () => {
    const email = Accounts.uniqueEmail("files")
    const password = "correct horse battery"
    await signUpAndLogIn(page, server.url, email, password)
    const session = (await page.evaluate(() => sessionStorage.getItem("huddle.session")))!

    // Memories: none, then one created, edited and deleted; the server agrees at each step.
    await page.getByRole("link", { name: "Memories" }).click()
    await heading("Memories").waitFor()
    await page.getByText("No memories yet").waitFor()
    await check("memories-empty")
    await page.getByRole("button", { name: "Save memory" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("content must not be empty")
    await page.getByLabel("What to remember").fill("Our staging cluster is called kestrel.")
    await page.getByRole("button", { name: "Save memory" }).click()
    // The one memory (its text leaves the item's content while it is edited in a field).
    const item = page.locator("li.memory")
    await item.waitFor()
    expect(await item.textContent()).toContain("Personal: only you")
    const memories = async () => (await server.request("GET", "/v1/memories", { token: session })).body.data as Array<{ content: string; scope: string }>
    expect((await memories()).map((m) => [m.scope, m.content])).toEqual([["personal", "Our staging cluster is called kestrel."]])
    await check("memories-one")

    await item.getByRole("button", { name: /^Edit memory/ }).click()
    const editor = item.getByLabel("What to remember")
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA")
    await editor.fill("Our staging cluster is called osprey.")
    await item.getByRole("button", { name: "Save" }).click()
    await page.getByText("Memory changed.").waitFor()
    await item.filter({ hasText: "osprey" }).waitFor()
    expect((await memories()).map((m) => m.content)).toEqual(["Our staging cluster is called osprey."])

    await item.getByRole("button", { name: /^Delete memory/ }).click()
    // The confirmation starts on the safe choice.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel")
    await check("memories-confirm-delete")
    await item.getByRole("button", { name: "Delete memory" }).click()
    await page.getByText("Memory deleted.").waitFor()
    await page.getByText("No memories yet").waitFor()
    expect(await memories()).toEqual([])

    // A workspace memory says whose it is.
    await page.getByLabel("What to remember").fill("Deploys go out on Tuesdays.")
    await page.getByLabel("Who it is for").selectOption("workspace")
    await page.getByLabel("Workspace", { exact: true }).selectOption({ label: "Your personal workspace" })
    await page.getByRole("button", { name: "Save memory" }).click()
    await item.filter({ hasText: "Tuesdays" }).waitFor()
    expect(await item.locator(".scope").textContent()).toBe("Workspace: your personal workspace")
    expect((await memories()).map((m) => m.scope)).toEqual(["workspace"])

    // A repository: a directory under the server's roots, indexed in the background.
    await page.getByRole("link", { name: "Repositories" }).click()
    await heading("Repositories").waitFor()
    await page.getByText("No repository is connected").waitFor()
    await check("repository-none")
    await page.getByLabel("Directory", { exact: true }).fill(join(tmpdir(), "not-allowed"))
    await page.getByRole("button", { name: "Connect a repository" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("HUDDLE_REPO_ROOTS")
    await page.getByLabel("Directory", { exact: true }).fill(join(root, "repo"))
    await page.getByRole("button", { name: "Connect a repository" }).click()
    await page.getByText("Indexed", { exact: true }).waitFor({ timeout: 30_000 })
    const card = page.locator("section.card")
    expect(await card.textContent()).toMatch(/Indexed files3 \(2 source, 1 docs\)/)
    // Each reason opens onto its paths.
    const binaries = page.getByRole("list", { name: "Skipped as binary (not text)" })
    expect(await binaries.isVisible()).toBe(false)
    await card.getByText("1 file: binary (not text)").click()
    expect(await binaries.getByRole("listitem").allTextContents()).toEqual(["logo.png"])
    await check("repository-indexed")

    // An answer grounded in it: a reference in the conversation leads to the file, its lines highlighted.
    await page.goto(`${server.url}/#/sessions/new`)
    await page.getByLabel(/^Your (question|message)$/).fill("Where is greet defined in src/app.ts?")
    await page.getByRole("button", { name: "Send" }).click()
    const reference = page.locator('.message a[href*="#/files/"]').first()
    await reference.waitFor()
    expect(await reference.textContent()).toMatch(/^src\/app\.ts/)
    await reference.click()
    await heading("src/app.ts").waitFor()
    await page.locator(".line.cited").first().waitFor()
    expect(await page.locator(".line.cited mark").allTextContents()).toContain(app[0])
    await check("file-from-reference")

    // The file view, at the cited lines.
    const workspaceId = (await server.request("GET", "/v1/workspaces", { token: session })).body.data[0].id as string
    await page.goto(`${server.url}/#/files/${workspaceId}/src/app.ts?lines=2-4`)
    await heading("src/app.ts").waitFor()
    await page.locator(".line.cited").first().waitFor()
    expect(await page.locator(".line.cited mark").allTextContents()).toEqual(app.slice(1, 4))
    expect(await page.locator(".line .ln").allTextContents()).toEqual(app.map((_, i) => String(i + 1)))
    await page.getByText("Lines 2–4 are highlighted.").waitFor()
    await check("file-cited")

    // A long file: the cited lines are scrolled into view.
    await page.goto(`${server.url}/#/repository`)
    await page.getByRole("textbox", { name: "Open a file" }).fill("src/long.ts")
    await page.getByRole("button", { name: "Open", exact: true }).click()
    await heading("src/long.ts").waitFor()
    expect(page.url()).toBe(`${server.url}/#/files/${workspaceId}/src%2Flong.ts`)
    await page.goto(`${server.url}/#/files/${workspaceId}/src%2Flong.ts?lines=250-252`)
    await page.getByText("Lines 250–252 are highlighted.").waitFor()
    expect(await page.locator(".line.cited mark").allTextContents()).toEqual(long.slice(249, 252))
    await expect.poll(() => page.locator("#L250").isVisible()).toBe(true)
    expect(await page.locator("#L250").evaluate((line) => {
      const box = line.getBoundingClientRect()
      return box.top >= 0 && box.bottom <= innerHeight
    })).toBe(true)
    expect(await page.evaluate(() => scrollY)).toBeGreaterThan(0)

    // A path the index does not hold: the server's words.
    await page.goto(`${server.url}/#/files/${workspaceId}/logo.png`)
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("No indexed file at this path: logo.png")

    // One huddle message over HTTP, then its charge on the account page (after the one asked in the page).
    const before = (await server.request("GET", "/v1/me", { token: session })).body.credits.balance as number
    const reply = await server.request("POST", "/v1/huddle", { token: session, body: { input: "What does greet return?" } })
    expect(reply.status).toBe(200)
    await page.goto(`${server.url}/#/account`)
    await heading("Your account").waitFor()
    const charge = page.getByRole("row").filter({ hasText: `Request ${reply.body.intent_id}` }).filter({ hasText: "Held while running" })
    await charge.waitFor()
    expect(await charge.textContent()).toMatch(/−\d/)
    // What was not used comes back, and the rows net to what the message was charged.
    const returned = page.getByRole("row").filter({ hasText: `Request ${reply.body.intent_id}` }).filter({ hasText: "Returned, not used" })
    const amount = async (row: typeof charge) => Number((await row.locator("td.number").first().textContent())!.replace(/[^\d]/g, ""))
    expect(await amount(charge) - (await returned.count() === 0 ? 0 : await amount(returned))).toBe(reply.body.credits_charged)
    // The row that settled the message's one call says the tokens it was charged for.
    expect(await returned.count()).toBe(1)
    const usage = reply.body.usage as { input_tokens: number; output_tokens: number }
    expect(await returned.locator('td[data-label="Tokens"]').textContent())
      .toBe(`${usage.input_tokens.toLocaleString("en-US")} in, ${usage.output_tokens.toLocaleString("en-US")} out`)
    expect(await charge.locator('td[data-label="Tokens"]').textContent()).toBe("")
    expect(await page.getByRole("row").filter({ hasText: "starter grant" }).textContent()).toContain("+1,000 credits")
    const balance = (await server.request("GET", "/v1/me", { token: session })).body.credits.balance as number
    expect(balance).toBe(before - reply.body.credits_charged)
    expect(await page.locator(".balance").textContent()).toBe(`${balance.toLocaleString("en-US")} credits`)
    await check("account-charges")
  })

  it("tells someone who may not use the workspace that there is no such file", async () => {
    const owner = await Accounts.signupAndLogin(server, "owner")
    const workspaceId = (await server.request("GET", "/v1/workspaces", { token: owner.session })).body.data[0].id as string
    const connected = await server.request("PUT", `/v1/workspaces/${workspaceId}/repository`, { token: owner.session, body: { path: join(root, "repo") } })
    expect(connected.status).toBe(202)
    const stranger = await Accounts.signupAndLogin(server, "stranger")
    await openSignedIn(page, server.url, stranger.session, `files/${workspaceId}/README.md?lines=1`)
    await heading("README.md").waitFor()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Workspace not found")
    expect(await page.locator("pre.code").count()).toBe(0)
    await check("file-not-found")
  })

  it("shows a member their organization's workspace, says who manages it, and gives the server's refusal to connect", async () => {
    const org = await Orgs.createOrg(server)
    const member = await Orgs.addMember(server, org)
    const created = await server.request("POST", `/v1/orgs/${org.id}/admin/workspaces`, { token: org.admin.session, body: { name: "Backend" } })
    expect(created.status).toBe(201)
    await openSignedIn(page, server.url, member.session, "repository")
    await heading("Repositories").waitFor()
    const card = page.getByRole("region", { name: "Backend" })
    await card.getByText(`A workspace of Acme Research: its admins manage the repository.`).waitFor()
    await card.getByLabel("Directory", { exact: true }).fill(join(root, "repo"))
    await card.getByRole("button", { name: "Connect a repository" }).click()
    await expect.poll(() => card.getByRole("alert").textContent()).toMatch(/admin/i)
    expect((await server.request("GET", `/v1/workspaces/${created.body.id}/repository`, { token: member.session })).status).toBe(404)
    await check("repository-org-member")
  })
})
