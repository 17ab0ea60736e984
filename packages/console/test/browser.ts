/**
 * The browser of the console's end-to-end suites: Debian's Chromium (never one downloaded),
 * headless, driven by playwright-core; a page's life in it (opened in a context of its own with
 * its faults watched, closed expecting none); and what every page is checked for on the way: no
 * serious accessibility violation (axe-core), a screenshot kept for people to look at.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core"
import { expect } from "vitest"
import { Duration } from "effect"

/** Debian's package puts it here; `.ci/run` installs it when it is missing. */
export const executablePath = process.env.HUDDLE_CHROMIUM ?? "/usr/bin/chromium"

export const launch = (): Promise<Browser> =>
  chromium.launch({
    executablePath,
    headless: true,
    // Chromium refuses to sandbox as root (a CI container); elsewhere it keeps its sandbox.
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : []
  })

const screenshots = fileURLToPath(new URL("../../../artifacts/screenshots/", import.meta.url))

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown> }>
}

/**
 * The serious and critical violations of WCAG 2.1 A/AA and axe's best practices on the page as
 * it is now. axe is evaluated through the debugging protocol, which the page's content security
 * policy does not govern (an injected <script> would be refused, rightly).
 */
export const accessibilityViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<Violation> }> } }).axe
    const result = await axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] })
    return result.violations
  })
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`)
}

/** Saves a full-page screenshot as artifacts/screenshots/<name>.png (git-ignored). */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  mkdirSync(screenshots, { recursive: true })
  await page.screenshot({ path: `${screenshots}${name}.png`, fullPage: true })
}

/** Checks the page as it is: no serious accessibility violation, and kept as the screenshot `name`. */
export const checkPage = async (page: Page, name: string): Promise<void> => {
  expect(await accessibilityViolations(page), name).toEqual([])
  await screenshot(page, name)
}

/**
 * What goes wrong on a page that the test did not ask for: script errors, errors logged to the
 * console (a refused request the test asked for is logged by the browser too, and is not one),
 * and any request to a host other than the console's own. Tests expect the list to stay empty.
 */
export const watchFaults = (page: Page, origin: string): Array<string> => {
  const faults: Array<string> = []
  page.on("pageerror", (error) => faults.push(`page error: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) faults.push(`console: ${message.text()}`)
  })
  page.on("request", (request) => {
    if (!request.url().startsWith(`${origin}/`)) faults.push(`request elsewhere: ${request.url()}`)
  })
  return faults
}

/** A laptop's screen: the viewport pages open with, and the screenshots are taken at. */
export const laptop = { width: 1280, height: 800 }

/** A page of its own context (nothing shared with other tests), and what went wrong in it. */
export interface OpenPage {
  readonly context: BrowserContext
  readonly page: Page
  /** See `watchFaults`; `closePage` expects it empty. */
  readonly faults: Array<string>
}

export interface PageOptions {
  readonly viewport?: { readonly width: number; readonly height: number }
  /** Runs in each of the context's documents before the page's own script. */
  readonly initScript?: () => void
  /** Browser permissions granted to the console's origin (`clipboard-read` …). */
  readonly permissions?: ReadonlyArray<string>
}

/** Opens a page on the console at `origin` in a new context (English, a laptop's viewport unless told), its faults watched. */
export const openPage = async (browser: Browser, origin: string, options: PageOptions = {}): Promise<OpenPage> => {
  const context = await browser.newContext({ locale: "en-US", viewport: options.viewport ?? laptop })
  if (options.permissions !== undefined) await context.grantPermissions([...options.permissions], { origin })
  if (options.initScript !== undefined) await context.addInitScript(options.initScript)
  const page = await context.newPage()
  return { context, page, faults: watchFaults(page, origin) }
}

/** Closes the page's context; the test fails if anything went wrong in the page. */
export const closePage = async ({ context, faults }: OpenPage): Promise<void> => {
  await context.close()
  expect(faults).toEqual([])
}

/**
 * Opens `route` (`sessions/new`, `files/…`) as a tab that logged in earlier would: the session's
 * token, and the org worked in when given, are in the tab's storage before the page's script
 * first runs. Only before the first document: after that the tab is the console's (a logout or
 * another org chosen stays so on a reload).
 */
export const openSignedIn = async (page: Page, origin: string, session: string, route: string, orgId?: string): Promise<void> => {
  await page.addInitScript(({ orgId, session }) => {
    if (sessionStorage.getItem("huddle.test.signed-in") !== null) return
    sessionStorage.setItem("huddle.test.signed-in", "yes")
    sessionStorage.setItem("huddle.session", session)
    if (orgId !== null) sessionStorage.setItem("huddle.org", orgId)
  }, { orgId: orgId ?? null, session })
  await page.goto(`${origin}/#/${route}`)
}

/** Signs up through the console's form, then logs in: ends on the account page. */
export const signUpAndLogIn = async (page: Page, origin: string, email: string, password: string): Promise<void> => {
  const heading = (name: string) => page.getByRole("heading", { level: 1, name })
  await page.goto(`${origin}/#/signup`)
  await heading("Create an account").waitFor()
  await page.getByLabel("Email").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Create account" }).click()
  await heading("Log in").waitFor()
  await page.getByLabel("Password").fill(password)
  await page.getByLabel("Password").press("Enter")
  await heading("Your account").waitFor()
}

/** On a conversation's page: sends `text` as the next message, in `mode`. */
export const ask = async (page: Page, text: string, mode: "Single" | "Multi" | "Auto"): Promise<void> => {
  await page.getByLabel(/^Your (question|message)$/).fill(text)
  await page.getByRole("radio", { name: new RegExp(`^${mode}`) }).check()
  await page.getByRole("button", { name: "Send" }).click()
}

/** On a conversation's page: Huddle's answers that have arrived whole (not the one streaming). */
export const answers = (page: Page): Locator => page.locator(".message.from-huddle:not(.live)")

/**
 * A new directory holding `files` (path → content), to serve as the server's repository root
 * (`HUDDLE_REPO_ROOTS`): its real path, and how to remove it. Indexing is polled every 200 ms.
 */
export const repositoryRoot = (files: Readonly<Record<string, string | Buffer>>) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "huddle-console-roots-")))
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(root, file, ".."), { recursive: true })
    writeFileSync(join(root, file), content)
  }
  return {
    root,
    grounding: { roots: [root], jobs: { pollEvery: Duration.millis(200), progressEvery: Duration.zero } },
    remove: () => rmSync(root, { recursive: true, force: true })
  }
}
