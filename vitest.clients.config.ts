/**
 * The suites that drive heavyweight clients (`*.clients.test.ts`: Claude Code's native binary)
 * against the real server on loopback: `npm run test:clients`. Those clients come from the
 * test-only package `test-clients/` (`npm ci --prefix test-clients`), kept out of the
 * workspace's install; without it the suites skip, saying why. `.ci/run` installs it and runs
 * this after the browser suites. One file at a time: each run of a client is a process of its own.
 */
import { defineConfig } from "vitest/config"
import { alone, clientSuites, resolve, test } from "./vitest.shared.js"

export default defineConfig({
  resolve,
  test: { ...test, name: "clients", include: clientSuites, testTimeout: 120_000, ...alone }
})
