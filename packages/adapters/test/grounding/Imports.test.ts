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
})
