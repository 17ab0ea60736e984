/**
 * `@huddle/server/contract` is what a browser console imports (docs/decisions/0017): bundled for
 * the browser, as a client's bundler would, it must build and reach no Node built-in, anywhere in
 * its graph (the domain's schemas, `effect`, `@effect/platform` included). ContractImports.test.ts
 * follows the contract's own files (src/); this follows every import, as the bundler does.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const packages = fileURLToPath(new URL("../../", import.meta.url))
const root = fileURLToPath(new URL("../../../", import.meta.url))

/**
 * The workspace packages resolve to their TypeScript sources, as in vitest.shared.ts: `@huddle/x`
 * to its index, a capability of the domain (`@huddle/domain/credits`, a folder) to the folder's
 * index, any other subpath (`@huddle/domain/shared/Errors`) to its module.
 */
const workspaceSources: esbuild.Plugin = {
  name: "huddle-workspace-sources",
  setup(build) {
    build.onResolve({ filter: /^@huddle\/[a-z]+(\/.*)?$/ }, ({ path }) => {
      const [, pkg, subpath] = /^@huddle\/([a-z]+)(?:\/(.*))?$/.exec(path)!
      const src = `${packages}${pkg}/src/`
      if (subpath === undefined) return { path: `${src}index.ts` }
      const capability = `${src}${subpath}/index.ts`
      return { path: existsSync(capability) ? capability : `${src}${subpath}.ts` }
    })
  }
}

const builtins = new Set(builtinModules)
const isBuiltin = (specifier: string) => specifier.startsWith("node:") || builtins.has(specifier.split("/")[0]!)

/**
 * Node built-ins are left out of the bundle (external), so that the metafile lists every one
 * imported, by whom, rather than the build stopping at the first it cannot resolve.
 */
const builtinsExternal: esbuild.Plugin = {
  name: "node-builtins-external",
  setup(build) {
    build.onResolve({ filter: /.*/ }, ({ path }) => (isBuiltin(path) ? { path, external: true } : undefined))
  }
}

interface Bundled {
  readonly errors: ReadonlyArray<esbuild.Message>
  /** `importer -> built-in` for every Node built-in the graph imports. */
  readonly nodeImports: ReadonlyArray<string>
  /** The files bundled, relative to the repository. */
  readonly inputs: ReadonlyArray<string>
  readonly code: string
}

const bundle = async (entry: string): Promise<Bundled> => {
  try {
    const result = await esbuild.build({
      entryPoints: [`${packages}server/src/${entry}`],
      absWorkingDir: root,
      platform: "browser",
      format: "esm",
      bundle: true,
      write: false,
      metafile: true,
      logLevel: "silent",
      plugins: [workspaceSources, builtinsExternal]
    })
    const nodeImports = Object.entries(result.metafile.inputs).flatMap(([file, input]) =>
      input.imports.filter((imported) => isBuiltin(imported.path)).map((imported) => `${file} -> ${imported.path}`)
    )
    return { errors: result.errors, nodeImports, inputs: Object.keys(result.metafile.inputs), code: result.outputFiles[0]!.text }
  } catch (failure) {
    const errors = (failure as Partial<esbuild.BuildFailure>).errors
    if (errors === undefined) throw failure
    return { errors, nodeImports: [], inputs: [], code: "" }
  }
}

/** Runs the bundle (an ES module) and returns what it exports. */
const load = async (code: string): Promise<Record<string, any>> => {
  const dir = mkdtempSync(join(tmpdir(), "huddle-contract-"))
  try {
    const file = join(dir, "contract.mjs")
    writeFileSync(file, code)
    return await import(/* @vite-ignore */ pathToFileURL(file).href)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

type Groups = Record<string, { readonly endpoints: Record<string, { readonly method: string; readonly path: string }> }>

describe("the contract bundled for the browser", () => {
  let contract: Bundled
  beforeAll(async () => {
    contract = await bundle("contract.ts")
  })

  it("builds with no errors and imports no Node built-in", () => {
    expect(contract.errors).toEqual([])
    expect(contract.nodeImports).toEqual([])
    // The domain's schemas came in from its sources, through the aliases.
    expect(contract.inputs.some((file) => file.startsWith("packages/domain/src/shared/"))).toBe(true)
  })

  it("carries the Api with its routes, prefixed, and the error table", async () => {
    const exported = await load(contract.code)
    const routes = Object.values(exported.Api.groups as Groups).flatMap((group) =>
      Object.values(group.endpoints).map((endpoint) => `${endpoint.method} ${endpoint.path}`)
    )
    expect(routes).toContain("POST /v1/huddle")
    expect(routes).toContain("POST /v1/huddle/sessions/:session_id/messages")
    expect(routes).toContain("POST /v1/chat/completions")
    expect(routes.filter((route) => !route.split(" ")[1]!.startsWith("/v1/"))).toEqual(["GET /healthz", "GET /readyz"])
    expect(exported.ErrorTable.table.InsufficientCredits).toMatchObject({ code: "INSUFFICIENT_CREDITS", status: 402 })
    expect(exported.Limits.maxInputLength).toBe(32_000)
  })

  it("would catch the server: Server.ts bundled the same way reaches Node built-ins", async () => {
    const server = await bundle("Server.ts")
    expect(server.errors).toEqual([])
    expect(server.nodeImports).toContain("packages/server/src/shared/IdempotencyLive.ts -> node:crypto")
  })
})
