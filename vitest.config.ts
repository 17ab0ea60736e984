import { defineConfig } from "vitest/config"
import { alone, browserSuites, clientSuites, maxWorkers, processSuites, resolve, test } from "./vitest.shared.js"

export default defineConfig({
  resolve,
  test: {
    ...test,
    maxWorkers,
    projects: [
      {
        resolve,
        test: { ...test, name: "suites", include: ["packages/*/test/**/*.test.ts"], exclude: [...processSuites, ...browserSuites, ...clientSuites] }
      },
      {
        resolve,
        test: { ...test, name: "processes", include: processSuites, sequence: { groupOrder: 1 }, ...alone }
      }
    ]
  }
})
