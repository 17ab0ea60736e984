/**
 * The web console end to end, in a real browser against the real server on loopback: a person
 * signs up, logs in, sees the starter balance, sets personal preferences, creates an API key (its secret shown once, and it
 * works over HTTP), sees it listed, revokes it (it stops working) and logs out. On the way, every
 * page passes axe-core with no serious violation, reads on a phone, answers the keyboard, and
 * the page never asks another host for anything (its content security policy would refuse it).
 */
import { Accounts, TestServer } from "@huddle/testkit"
import type { Browser, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { checkPage, closePage, laptop, launch, type OpenPage, openPage } from "./browser.js"

const starterCredits = 1000
const phone = { width: 390, height: 844 }

describe("the web console", () => {
  let server: TestServer.TestServer
  let browser: Browser
  /** The test's page; what goes wrong in it (script errors, console errors, CSP refusals among them, requests elsewhere) fails the test. */
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
    opened = await openPage(browser, server.url, { permissions: ["clipboard-read", "clipboard-write"] })
    page = opened.page
  })
  afterEach(() => closePage(opened))

  /** Checks the page as it is: accessible, and kept as a screenshot. */
  const check = (name: string) => checkPage(page, name)

  const heading = (name: string) => page.getByRole("heading", { level: 1, name })

  const secretField = () => page.getByLabel("Your new API key")

  it("takes a new user from sign-up to an API key that works, is listed, is revoked, and to logging out", async () => {
    const email = Accounts.uniqueEmail("console")
    const password = "correct horse battery"

    await page.goto(`${server.url}/`)
    await expect.poll(() => page.url()).toBe(`${server.url}/#/login`)
    await heading("Log in").waitFor()
    await check("login")

    await page.getByRole("link", { name: "Create an account" }).click()
    await heading("Create an account").waitFor()
    // The contract's own rules, said before anything is sent.
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("short")
    await page.getByRole("button", { name: "Create account" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("8 to 256 characters")
    await check("signup")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create account" }).click()

    await heading("Log in").waitFor()
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Your account is ready")
    expect(await page.getByLabel("Email").inputValue()).toBe(email)
    await page.getByLabel("Password").fill(password)
    await page.getByLabel("Password").press("Enter")

    await heading("Your account").waitFor()
    expect(page.url()).toBe(`${server.url}/#/account`)
    await expect.poll(() => page.locator(".balance").textContent()).toBe("1,000 credits")
    expect(await page.locator("main").textContent()).toContain(email)
    await check("account")

    // Personal preferences: set two, saved as the server keeps them; the others stay inherited.
    const preferences = page.getByRole("form", { name: "Your preferences" })
    await preferences.getByLabel("Model tier").selectOption("premium")
    await preferences.getByLabel("Huddle mode").selectOption("multi")
    await preferences.getByRole("button", { name: "Save preferences" }).click()
    await page.getByText("Saved. Your next requests follow these preferences.").waitFor()
    const token = (await page.evaluate(() => sessionStorage.getItem("huddle.session")))!
    expect((await server.request("GET", "/v1/me", { token })).body.preferences).toEqual({ model_tier: "premium", mode: "multi" })
    await check("account-preferences")

    await page.getByRole("link", { name: "API keys" }).click()
    await heading("API keys").waitFor()
    await page.getByText("No API keys yet").waitFor()
    await check("keys-empty")

    await page.getByLabel("Name").fill("e2e laptop")
    await page.getByRole("button", { name: "Create key" }).click()
    await secretField().waitFor()
    const key = await secretField().inputValue()
    expect(key).toMatch(/^hk_/)
    await page.getByRole("button", { name: "Copy" }).click()
    await page.getByText("Copied to the clipboard.").waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)
    await check("keys-created")

    // The key works over HTTP, as a program would use it.
    const me = await server.request("GET", "/v1/me", { token: key })
    expect(me.status).toBe(200)
    expect(me.body.user.email).toBe(email)

    const row = page.getByRole("row", { name: /e2e laptop/ })
    // The key's public prefix and last four characters, never more of it.
    const [prefix, lastFour] = (await row.locator("code").textContent())!.split("…")
    expect(prefix).toMatch(/^hk_.+/)
    expect(key.startsWith(prefix!)).toBe(true)
    expect(lastFour).toBe(key.slice(-4))
    expect(await row.textContent()).toContain("Personal")

    // Shown once: dismissed, or on the next visit, the secret is nowhere on the page.
    await page.getByRole("button", { name: "I have saved it" }).click()
    expect(await page.content()).not.toContain(key)
    await page.reload()
    await row.waitFor()
    expect(await page.content()).not.toContain(key)
    await page.setViewportSize(phone)
    await check("keys-list-phone")
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true)
    await page.setViewportSize(laptop)
    await check("keys-list")

    await row.getByRole("button", { name: "Revoke e2e laptop" }).click()
    // The confirmation starts on the safe choice; Escape would cancel.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel")
    await check("keys-confirm-revoke")
    await row.getByRole("button", { name: "Revoke key" }).click()
    await page.getByText("Revoked “e2e laptop”").waitFor()
    await page.getByText("No API keys yet").waitFor()
    expect((await server.request("GET", "/v1/me", { token: key })).status).toBe(401)

    const session = await page.evaluate(() => sessionStorage.getItem("huddle.session"))
    expect(session).toMatch(/^hs_/)
    await page.getByRole("button", { name: "Log out" }).click()
    await heading("Log in").waitFor()
    await page.getByText("You are logged out.").waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem("huddle.session"))).toBeNull()
    expect((await server.request("GET", "/v1/me", { token: session! })).status).toBe(401)
    // Without a session, the console's pages lead to logging in.
    await page.goto(`${server.url}/#/keys`)
    await expect.poll(() => page.url()).toBe(`${server.url}/#/login`)
  })

  it("can be used with the keyboard alone, in a sensible order, with the server's words for a refusal", async () => {
    const user = await Accounts.signupAndLogin(server, "keyboard")
    await page.goto(`${server.url}/#/login`)
    await heading("Log in").waitFor()
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement
        return element === null ? "" : `${element.tagName.toLowerCase()}:${element.getAttribute("aria-label") ?? element.textContent?.trim() ?? ""}${element instanceof HTMLInputElement ? element.type : ""}`
      })
    const order: Array<string> = []
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab")
      order.push(await focused())
    }
    expect(order).toEqual(["a:Skip to content", "a:Log in", "a:Sign up", "input:email", "input:password", "button:Log in"])
    // Every focus is visible: the outline the style sheet gives :focus-visible.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe("solid")

    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("Shift+Tab")
    await page.keyboard.type(user.email)
    await page.keyboard.press("Tab")
    await page.keyboard.type("not the password")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Invalid email or password")

    // The focus stays in the password field, to try again.
    await page.keyboard.press("ControlOrMeta+a")
    await page.keyboard.type(user.password)
    await page.keyboard.press("Enter")
    await heading("Your account").waitFor()
  })

  it("says when the account cannot be loaded, in the server's words, and returns to logging in when the session ends", async () => {
    const user = await Accounts.signupAndLogin(server, "states")
    await page.goto(`${server.url}/#/login`)
    await page.evaluate((token) => sessionStorage.setItem("huddle.session", token), user.session)

    // Loading, then the server's refusal.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route("**/v1/me", async (route) => {
      await held
      await route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({ error: "SERVICE_UNAVAILABLE", message: "The service is temporarily unavailable; retry shortly" })
      })
    })
    // Opened again with the session stored, the console goes to the account.
    await page.reload()
    await page.getByText("Loading your account…").waitFor()
    release()
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("The service is temporarily unavailable; retry shortly")
    await check("account-error")
    await page.unroute("**/v1/me")

    // The session ends elsewhere: the next call is refused (401) and the console asks to log in again.
    await server.request("POST", "/v1/auth/logout", { token: user.session })
    await page.goto(`${server.url}/#/keys`)
    await heading("Log in").waitFor()
    await page.getByText("Your session has ended. Log in again.").waitFor()
    expect(await page.evaluate(() => sessionStorage.getItem("huddle.session"))).toBeNull()
  })
})
