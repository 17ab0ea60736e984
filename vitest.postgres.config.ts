/**
 * The suites that need a real PostgreSQL (`*.contract.test.ts`), run against it only:
 * `TEST_DATABASE_URL=postgres://… npm run test:postgres`. `.ci/run` runs this after `npm test`.
 */
import { defineConfig } from "vitest/config"
import { alone, maxWorkers, processSuites, resolve, test } from "./vitest.shared.js"

if (!process.env.TEST_DATABASE_URL) {
  throw new Error("test:postgres needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres")
}

const contract = "packages/*/test/**/*.contract.test.ts"
const env = { HUDDLE_TEST_ENGINES: "postgres" }

export default defineConfig({
  resolve,
  test: {
    ...test,
    maxWorkers,
    projects: [
      { resolve, test: { ...test, env, name: "contract", include: [contract], exclude: processSuites } },
      { resolve, test: { ...test, env, name: "processes", include: processSuites, sequence: { groupOrder: 1 }, ...alone } }
    ]
  }
})
