/**
 * Test coverage of a small monorepo, indexed from disk: tests import workspace packages by name
 * (through `exports` maps that point to builds, `main`, `#imports`) and through tsconfig `paths`,
 * and each import must land on the source file the toolchain would load (decision 0036).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { index } from "@huddle/adapters/grounding/Indexer"
import { coverage } from "@huddle/domain/grounding/DeepInspection"
import { Effect } from "effect"
import { removeAll, repository } from "./fixtures.js"

afterAll(removeAll)

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n"

const monorepo = () =>
  repository({
    "package.json": json({ name: "acme", private: true, workspaces: ["packages/*", "apps/*", "!packages/legacy"] }),
    "tsconfig.base.json": [
      "{",
      "  // Shared by every package; `paths` relative to this file's baseUrl.",
      "  \"compilerOptions\": {",
      "    \"strict\": true,",
      "    \"baseUrl\": \".\",",
      "    \"paths\": { \"@app/*\": [\"apps/web/src/*\"], },",
      "  },",
      "}"
    ].join("\n"),
    // Built into dist/esm from src: the exports name the build, the tsconfig says where it comes from.
    "packages/core/package.json": json({
      name: "@acme/core",
      exports: {
        ".": { types: "./dist/esm/index.d.ts", default: "./dist/esm/index.js" },
        "./internal/*": null,
        "./*": { types: "./dist/esm/*.d.ts", import: "./dist/esm/*.js" }
      }
    }),
    "packages/core/tsconfig.json": "{ \"extends\": \"../../tsconfig.base.json\", \"compilerOptions\": { \"rootDir\": \"src\", \"outDir\": \"dist/esm\" } }\n",
    "packages/core/src/index.ts": "export * from \"./money/Money.js\"\n",
    "packages/core/src/money/Money.ts": "export const cents = (n: number) => n * 100\n",
    "packages/core/src/time/Clock.ts": "export const now = () => Date.now()\n",
    "packages/core/src/internal/Secret.ts": "export const secret = 1\n",
    "packages/core/test/core.test.ts": [
      "import { cents } from \"@acme/core\"",
      "import { cents as again } from \"@acme/core/money/Money\"",
      "// Not exported (a null target): no file loads, so nothing is covered by it.",
      "import \"@acme/core/internal/Secret\""
    ].join("\n") + "\n",
    // Exports straight to sources.
    "packages/ui/package.json": json({ name: "@acme/ui", exports: { "./*": "./src/*.tsx" } }),
    "packages/ui/src/Button.tsx": "export const Button = () => null\n",
    "packages/ui/src/Card.tsx": "export const Card = () => null\n",
    // No exports: `main`, and subpaths as files.
    "packages/utils/package.json": json({ name: "@acme/utils", main: "./lib/index.js" }),
    "packages/utils/lib/index.js": "module.exports = {}\n",
    "packages/utils/lib/strings.js": "module.exports.shout = (s) => s.toUpperCase()\n",
    "packages/utils/test/text.test.js": "const utils = require(\"@acme/utils\")\nconst { shout } = require(\"@acme/utils/lib/strings\")\n",
    // Package `imports`.
    "packages/cli/package.json": json({ name: "@acme/cli", imports: { "#config": "./src/config.ts" } }),
    "packages/cli/src/config.ts": "export const config = {}\n",
    "packages/cli/test/cli.test.ts": "import { config } from \"#config\"\n",
    // Excluded from the workspaces: not linked, so not importable by name.
    "packages/legacy/package.json": json({ name: "@acme/legacy", main: "index.js" }),
    "packages/legacy/index.js": "module.exports = 1\n",
    // Not a workspace member at all.
    "examples/other/package.json": json({ name: "@acme/other", main: "index.ts" }),
    "examples/other/index.ts": "export const other = 1\n",
    "apps/web/package.json": json({ name: "web", dependencies: { "@acme/ui": "*" } }),
    "apps/web/tsconfig.json": "{\n  // the app\n  \"extends\": \"../../tsconfig.base.json\",\n  \"include\": [\"src\", \"test\"],\n}\n",
    "apps/web/src/pages/Home.ts": "export const Home = 1\n",
    "apps/web/test/home.test.ts": [
      "import { Home } from \"@app/pages/Home\"",
      "import { Button } from \"@acme/ui/Button\"",
      "import { other } from \"@acme/other\"",
      "import legacy from \"@acme/legacy\"",
      "import { Effect } from \"effect\""
    ].join("\n") + "\n"
  })

describe("coverage of a monorepo", () => {
  it.effect("links each test to the sources its package and path imports load, and nothing else", () =>
    Effect.gen(function*() {
      const { snapshot } = yield* index(monorepo())
      const computed = coverage(snapshot)
      expect(Object.fromEntries(computed.sources.map((source) => [source.path, source.tests.map((test) => `${test.path} (${test.via})`)]))).toEqual({
        "apps/web/src/pages/Home.ts": ["apps/web/test/home.test.ts (import)"],
        "examples/other/index.ts": [],
        "packages/cli/src/config.ts": ["packages/cli/test/cli.test.ts (import)"],
        "packages/core/src/index.ts": ["packages/core/test/core.test.ts (import)"],
        "packages/core/src/internal/Secret.ts": [],
        "packages/core/src/money/Money.ts": ["packages/core/test/core.test.ts (import)"],
        "packages/core/src/time/Clock.ts": [],
        "packages/legacy/index.js": [],
        "packages/ui/src/Button.tsx": ["apps/web/test/home.test.ts (import)"],
        "packages/ui/src/Card.tsx": [],
        "packages/utils/lib/index.js": ["packages/utils/test/text.test.js (import)"],
        "packages/utils/lib/strings.js": ["packages/utils/test/text.test.js (import)"]
      })
      expect(computed.untested).toEqual([
        "examples/other/index.ts",
        "packages/core/src/internal/Secret.ts",
        "packages/core/src/time/Clock.ts",
        "packages/legacy/index.js",
        "packages/ui/src/Card.tsx"
      ])
    }))
})
