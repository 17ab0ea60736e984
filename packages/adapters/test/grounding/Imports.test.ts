import { describe, expect, it } from "@effect/vitest"
import { importFactsOf, resolveImports } from "@huddle/adapters/grounding/Imports"

const edges = (files: Record<string, string>, language: (path: string) => string) => {
  const list = Object.keys(files).map((path) => ({ path, language: language(path) }))
  const facts = new Map(list.map((file) => [file.path, importFactsOf(file.path, file.language, files[file.path]!)]))
  return resolveImports(list, facts).map((edge) => `${edge.from} -> ${edge.to}`)
}

describe("Imports", () => {
  it("JavaScript/TypeScript: every form of relative import, resolved as Node and TypeScript do", () => {
    expect(edges({
      "src/main.ts": [
        "import {",
        "  a,",
        "  b",
        "} from \"./multi.js\"",
        "import \"./polyfill\"",
        "export * from \"./reexport.js\"",
        "export { c } from './named'",
        "const lazy = await import(\"./lazy.mjs\")",
        "import data from \"../data.json\"",
        "import React from \"react\"",
        "import { outside } from \"../../elsewhere.js\"",
        "// import { gone } from \"./gone.js\""
      ].join("\n"),
      "src/multi.ts": "",
      "src/polyfill/index.js": "",
      "src/reexport.tsx": "",
      "src/named.d.ts": "",
      "src/lazy.mts": "",
      "data.json": ""
    }, (path) => (path.endsWith(".json") ? "json" : path.endsWith(".js") ? "javascript" : "typescript"))).toEqual([
      "src/main.ts -> data.json",
      "src/main.ts -> src/lazy.mts",
      "src/main.ts -> src/multi.ts",
      "src/main.ts -> src/named.d.ts",
      "src/main.ts -> src/polyfill/index.js",
      "src/main.ts -> src/reexport.tsx"
    ])
  })

  it("a specifier that names an existing file is taken as written", () => {
    expect(edges({ "a.js": "require('./b.js')", "b.js": "", "b.ts": "" }, () => "javascript")).toEqual(["a.js -> b.js"])
  })

  it("a directory resolves through its package.json main before its index; `.`, `..` and a trailing `/` name a directory", () => {
    const language = (path: string) => (path.endsWith(".json") ? "json" : "javascript")
    expect(edges({
      "package.json": "{ \"name\": \"qs\", \"main\": \"lib/index.js\" }",
      "index.js": "",
      "lib/index.js": "",
      "test/parse.js": "var qs = require('../')",
      "test/dotdot.js": "",
      "test/dotdot/index.js": "",
      "test/dotdot/abc/index.js": "var up = require('..'); var here = require('.')",
      "plugins/a/package.json": "{ \"main\": \"./dist/entry\" }",
      "plugins/a/dist/entry.js": "",
      "plugins/b/package.json": "{ \"main\": \"src\" }",
      "plugins/b/src/index.js": "",
      "plugins/c/package.json": "not json",
      "plugins/c/index.js": "",
      "app.js": "require('./plugins/a'); require('./plugins/b/'); require('./plugins/c')"
    }, language)).toEqual([
      "app.js -> plugins/a/dist/entry.js",
      "app.js -> plugins/b/src/index.js",
      "app.js -> plugins/c/index.js",
      "test/dotdot/abc/index.js -> test/dotdot/index.js",
      "test/parse.js -> lib/index.js"
    ])
  })

  it("Python: relative levels, packages, submodules named in from-imports, nothing for the standard library", () => {
    expect(edges({
      "app/api/views.py": "from ..models import user, Order\nfrom . import forms\nfrom .helpers import *\nimport json\nimport app.settings as s\n",
      "app/__init__.py": "",
      "app/api/__init__.py": "",
      "app/api/forms.py": "",
      "app/api/helpers.py": "",
      "app/models/__init__.py": "",
      "app/models/user.py": "",
      "app/settings.py": ""
    }, () => "python")).toEqual([
      "app/api/views.py -> app/api/forms.py",
      "app/api/views.py -> app/api/helpers.py",
      "app/api/views.py -> app/models/user.py",
      "app/api/views.py -> app/settings.py"
    ])
  })

  const ecma = (path: string) =>
    path.endsWith(".json") ? "json" : path.endsWith(".yaml") ? "yaml" : /\.[mc]?js$/.test(path) ? "javascript" : "typescript"

  it("packages by name: pnpm workspaces, exports patterns (longest prefix), self-reference, built paths back to sources", () => {
    expect(edges({
      "pnpm-workspace.yaml": "packages:\n  - 'libs/**'\n  - \"tools/*\" # scripts\n  - '!libs/old/*'\nonlyBuiltDependencies: []\n",
      // Types in types/, code in dist/: both built from src/ (declarationDir and outDir).
      "libs/a/b/package.json": JSON.stringify({
        name: "@x/b",
        exports: { "./*": "./dist/*.js", "./feature/*": { types: "./types/features/*.d.ts" }, "./package.json": "./package.json" }
      }),
      "libs/a/b/tsconfig.build.json": JSON.stringify({ compilerOptions: { outDir: "dist", declarationDir: "types", rootDir: "src" } }),
      "libs/a/b/src/one.ts": "import { two } from \"@x/b/two\"",
      "libs/a/b/src/two.ts": "",
      "libs/a/b/src/features/f.ts": "",
      // A bundler's dist/ with no tsconfig saying so: the same path under src/.
      "tools/gen/package.json": JSON.stringify({ name: "gen", main: "dist/cli.mjs", exports: { ".": { import: "./dist/cli.mjs", require: "./dist/cli.cjs" } } }),
      "tools/gen/src/cli.mts": "",
      // Left out of the workspace: not importable by name from elsewhere, but by itself (it has `exports`).
      "libs/old/c/package.json": JSON.stringify({ name: "old-c", main: "index.js", exports: { ".": "./index.js", "./*": "./*.js" } }),
      "libs/old/c/index.js": "require(\"old-c/util\")",
      "libs/old/c/util.js": "",
      "app/main.ts": [
        "import \"@x/b/one\"",
        "import \"@x/b/feature/f\"",
        "import \"gen\"",
        "import \"old-c\"",
        "import \"@x/b/../../escape\"",
        "import \"node:fs\""
      ].join("\n")
    }, ecma)).toEqual([
      "app/main.ts -> libs/a/b/src/features/f.ts",
      "app/main.ts -> libs/a/b/src/one.ts",
      "app/main.ts -> tools/gen/src/cli.mts",
      "libs/a/b/src/one.ts -> libs/a/b/src/two.ts",
      "libs/old/c/index.js -> libs/old/c/util.js"
    ])
  })

  it("tsconfig paths and baseUrl, through extends (relative or a workspace package's file), before packages", () => {
    expect(edges({
      "package.json": JSON.stringify({ workspaces: { packages: ["config", "web"] } }),
      "config/package.json": JSON.stringify({ name: "@co/config" }),
      "config/base.json": "{ /* shared */ \"compilerOptions\": { \"paths\": { \"~/*\": [\"../web/src/*\", \"../web/generated/*\"] } } }",
      "web/package.json": JSON.stringify({ name: "@co/web" }),
      "web/tsconfig.json": "{ \"extends\": \"@co/config/base.json\" }",
      "web/src/deep/x.ts": "",
      "web/generated/api.ts": "",
      "web/test/x.test.ts": "import \"~/deep/x\"\nimport \"~/api\"",
      "server/tsconfig.json": "{ \"compilerOptions\": { \"baseUrl\": \"src\", \"paths\": { \"@co/web\": [\"shim.ts\"] } } }",
      "server/src/util/log.ts": "",
      "server/src/shim.ts": "",
      "server/src/main.ts": "import \"util/log\"\nimport \"@co/web\""
    }, ecma)).toEqual([
      "server/src/main.ts -> server/src/shim.ts",
      "server/src/main.ts -> server/src/util/log.ts",
      "web/test/x.test.ts -> web/generated/api.ts",
      "web/test/x.test.ts -> web/src/deep/x.ts"
    ])
  })
})
