/**
 * The web console's end-to-end suites (`*.browser.test.ts`), in Debian's Chromium driven by
 * playwright-core against the real server on loopback: `npm run test:browser` (it builds the
 * console first). `.ci/run` runs it after the PostgreSQL suites, installing `chromium` if needed.
 */
import { defineConfig } from "vitest/config"
import { browserSuites, resolve, test } from "./vitest.shared.js"

export default defineConfig({
  resolve,
  test: { ...test, name: "browser", include: browserSuites, testTimeout: 60_000 }
})
