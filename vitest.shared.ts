import { fileURLToPath } from "node:url"
import type { UserConfig } from "vitest/config"

const packages = fileURLToPath(new URL("./packages/", import.meta.url))

/** Tests run against the TypeScript sources of the workspace packages, not their builds. */
export const resolve: UserConfig["resolve"] = {
  alias: [
    { find: /^@huddle\/([a-z]+)$/, replacement: `${packages}$1/src/index.ts` },
    // A capability of the domain (`@huddle/domain/credits`): its folder's index.
    {
      find: /^@huddle\/domain\/(shared|accounts|orgs|request|credits|operator|spend|memories|models|huddle|audit)$/,
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

/** Suites that start server processes and time them: they run last, alone, not among the others. */
export const processSuites = ["packages/*/test/**/Process*.test.ts"]

/** The web console's suites in a real browser (`npm run test:browser`): not part of `npm test`. */
export const browserSuites = ["packages/*/test/**/*.browser.test.ts"]
