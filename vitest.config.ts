import { defineConfig } from "vitest/config"
import { browserSuites, processSuites, resolve, test } from "./vitest.shared.js"

export default defineConfig({
  resolve,
  test: {
    ...test,
    projects: [
      {
        resolve,
        test: { ...test, name: "suites", include: ["packages/*/test/**/*.test.ts"], exclude: [...processSuites, ...browserSuites] }
      },
      {
        resolve,
        test: { ...test, name: "processes", include: processSuites, sequence: { groupOrder: 1 } }
      }
    ]
  }
})
