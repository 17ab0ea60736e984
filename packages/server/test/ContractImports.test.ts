/**
 * The contract (`contract.ts`, `Api.ts` and every file they reach: each capability's `*Api.ts` and
 * the schemas of shared/) describes the wire and nothing else: it must not depend on how HTTP,
 * JSON-RPC or the edge implement it, nor on Node, so that it can be read (and documented, and
 * given to a client) on its own. Its files sit beside the handlers of their capability; this
 * follows the import lines from `contract.ts` and checks every file reached.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const srcDir = fileURLToPath(new URL("../src/", import.meta.url))

/** Every module a file names: static imports and re-exports, side-effect imports, dynamic imports. */
const importsOf = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((match) => match[1]!)

/** The files of src/ reached from `entry` through relative imports, with what each imports. */
const graphOf = (entry: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const reached = new Map<string, ReadonlyArray<string>>()
  const visit = (file: string) => {
    if (reached.has(file)) return
    const specifiers = importsOf(readFileSync(join(srcDir, file), "utf8"))
    reached.set(file, specifiers)
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) visit(relative(srcDir, join(srcDir, dirname(file), specifier.replace(/\.js$/, ".ts"))))
    }
  }
  visit(entry)
  return reached
}

/** Files that implement the contract: the edge, handlers, middleware and streaming dialects. */
const isImplementation = (file: string) => file.startsWith("edge/") || /(?:Http|Live|Dialect)\.ts$/.test(file)
/** Modules only an implementation needs: the server's builder, Node's platform, the adapters. */
const implementationModule = /^(?:@effect\/platform\/HttpApiBuilder|@effect\/platform-node(?:\/|$)|@huddle\/adapters(?:\/|$))/
const builtins = new Set(builtinModules)
const isBuiltin = (specifier: string) => specifier.startsWith("node:") || builtins.has(specifier.split("/")[0]!)

describe("the contract's imports", () => {
  const contract = graphOf("contract.ts")

  it("reads the files it checks", () => {
    expect([...contract.keys()]).toEqual(expect.arrayContaining(["Api.ts", "rpc/RpcApi.ts", "accounts/AuthApi.ts", "shared/ErrorTable.ts"]))
    expect(contract.get("rpc/RpcApi.ts")).toContain("./JsonRpcWire.js")
    // The graph would reach an implementation, were one imported.
    expect([...graphOf("Server.ts").keys()]).toEqual(expect.arrayContaining(["accounts/AuthHttp.ts", "edge/RequestEdge.ts"]))
  })

  it("finds forbidden imports in each form", () => {
    expect(importsOf(`import * as J from "../rpc/JsonRpc.js"\nimport "node:fs"\nconst m = import("../edge/X.js")\nexport { a } from "crypto"`))
      .toEqual(["../rpc/JsonRpc.js", "node:fs", "../edge/X.js", "crypto"])
    expect(["edge/RequestEdge.ts", "shared/IdempotencyLive.ts", "openai/OpenAiHttp.ts", "huddle/HuddleDialect.ts"].every(isImplementation)).toBe(true)
    expect(["@effect/platform/HttpApiBuilder", "@effect/platform-node/NodeStream", "@huddle/adapters/crypto/AnswerSealing"].every((s) => implementationModule.test(s)))
      .toBe(true)
    expect(["node:crypto", "crypto", "fs/promises"].every(isBuiltin)).toBe(true)
    expect(isBuiltin("effect")).toBe(false)
  })

  it("reaches no handler, middleware, dialect or edge, nor Node built-ins", () => {
    const offending = [...contract].flatMap(([file, specifiers]) => [
      ...(isImplementation(file) ? [file] : []),
      ...specifiers.filter((specifier) => implementationModule.test(specifier) || isBuiltin(specifier)).map((specifier) => `${file}: ${specifier}`)
    ])
    expect(offending).toEqual([])
  })
})
