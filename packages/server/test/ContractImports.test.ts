/**
 * The contract (packages/server/src/api) describes the wire and nothing else: it must not depend
 * on how HTTP, JSON-RPC or the edge implement it, nor on Node, so that it can be read (and
 * documented, and given to a client) on its own. Checked on the import lines of its files.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"

const apiDir = fileURLToPath(new URL("../src/api/", import.meta.url))

const sources = (readdirSync(apiDir, { recursive: true, encoding: "utf8" }))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => ({ file, text: readFileSync(apiDir + file, "utf8") }))

/** Every module a file names: static imports and re-exports, side-effect imports, dynamic imports. */
const importsOf = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((match) => match[1]!)

const implementation = /^(?:\.\.\/)+(?:http|rpc|edge)(?:\/|$)/
const builtins = new Set(builtinModules)
const isBuiltin = (specifier: string) => specifier.startsWith("node:") || builtins.has(specifier.split("/")[0]!)

describe("the contract's imports", () => {
  it("reads the files it checks", () => {
    expect(sources.map((source) => source.file)).toContain("RpcApi.ts")
    expect(importsOf(sources.find((source) => source.file === "RpcApi.ts")!.text)).toContain("./JsonRpcWire.js")
  })

  it("finds forbidden imports in each form", () => {
    expect(importsOf(`import * as J from "../rpc/JsonRpc.js"\nimport "node:fs"\nconst m = import("../edge/X.js")\nexport { a } from "crypto"`))
      .toEqual(["../rpc/JsonRpc.js", "node:fs", "../edge/X.js", "crypto"])
    expect(["../rpc/JsonRpc.js", "../http/middleware/IdempotencyLive.js", "../edge/RequestEdge.js"].every((s) => implementation.test(s)))
      .toBe(true)
    expect(["node:crypto", "crypto", "fs/promises"].every(isBuiltin)).toBe(true)
    expect(isBuiltin("effect")).toBe(false)
  })

  it("api/ imports nothing from http/, rpc/, edge/ or Node built-ins", () => {
    const offending = sources.flatMap(({ file, text }) =>
      importsOf(text)
        .filter((specifier) => implementation.test(specifier) || isBuiltin(specifier))
        .map((specifier) => `${file}: ${specifier}`)
    )
    expect(offending).toEqual([])
  })
})
