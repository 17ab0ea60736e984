import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const packages = fileURLToPath(new URL("./packages/", import.meta.url))

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources of the workspace packages, not their builds.
    alias: [
      { find: /^@huddle\/([a-z]+)$/, replacement: `${packages}$1/src/index.ts` },
      { find: /^@huddle\/([a-z]+)\/(.*)$/, replacement: `${packages}$1/src/$2.ts` }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: ["packages/testkit/src/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
