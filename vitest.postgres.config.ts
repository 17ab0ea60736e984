/**
 * The suites that need a real PostgreSQL (`*.contract.test.ts`), run against it only:
 * `TEST_DATABASE_URL=postgres://… npm run test:postgres`. `.ci/run` runs this after `npm test`.
 */
import { defineConfig, mergeConfig } from "vitest/config"
import base from "./vitest.config.js"

if (!process.env.TEST_DATABASE_URL) {
  throw new Error("test:postgres needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres")
}

export default mergeConfig(base, defineConfig({
  test: {
    include: ["packages/*/test/**/*.contract.test.ts"],
    env: { HUDDLE_TEST_ENGINES: "postgres" }
  }
}))
