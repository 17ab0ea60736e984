import { fileURLToPath } from "node:url"
import type { UserConfig } from "vitest/config"

const packages = fileURLToPath(new URL("./packages/", import.meta.url))

/** Tests run against the TypeScript sources of the workspace packages, not their builds. */
export const resolve: UserConfig["resolve"] = {
  alias: [
    { find: /^@huddle\/([a-z]+)$/, replacement: `${packages}$1/src/index.ts` },
    // A capability of the domain (`@huddle/domain/credits`): its folder's index.
    {
      find: /^@huddle\/domain\/(shared|observability|audit|identity|settings|credits|orgs|accounts|request|models|grounding|memories|council|spend|answers|huddle|workspaces|operator|instances)$/,
      replacement: `${packages}domain/src/$1/index.ts`
    },
    { find: /^@huddle\/([a-z]+)\/(.*)$/, replacement: `${packages}$1/src/$2.ts` }
  ]
}

export const test = {
  globalSetup: ["packages/testkit/src/globalSetup.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: "forks"
} as const

/**
 * Test files run side by side in this many forks. Vitest's default on a 2-core machine is one, and
 * most suites spend their time waiting on loopback servers and databases, not computing
 * (`HUDDLE_TEST_WORKERS` overrides; decision 0043).
 */
export const maxWorkers = Number(process.env.HUDDLE_TEST_WORKERS) > 0 ? Number(process.env.HUDDLE_TEST_WORKERS) : 3

/** The process suites time servers they start: one file at a time, in one fork. */
export const alone = { poolOptions: { forks: { singleFork: true } } } as const

/** Suites that start server processes and time them: they run last, alone, not among the others. */
export const processSuites = ["packages/*/test/**/Process*.test.ts"]

/** The web console's suites in a real browser (`npm run test:browser`): not part of `npm test`. */
export const browserSuites = ["packages/*/test/**/*.browser.test.ts"]

/**
 * Suites that drive heavyweight clients from the test-only package `test-clients/` (Claude Code's
 * native binary): `npm run test:clients`, not part of `npm test`. They skip, saying why, when
 * that package is not installed.
 */
export const clientSuites = ["packages/*/test/**/*.clients.test.ts"]
