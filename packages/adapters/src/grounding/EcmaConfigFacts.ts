/**
 * What the files that steer ECMAScript resolution say (`package.json`, a tsconfig/jsconfig,
 * `pnpm-workspace.yaml`), read once at indexing time for `EcmaPackages` (decision 0036).
 */
import { basename } from "./RepoPaths.js"

/** What a configuration file says that resolution needs. */
export type ConfigFacts =
  | {
    readonly kind: "package"
    readonly name?: string | undefined
    readonly main?: string | undefined
    readonly entries: ReadonlyArray<string>
    readonly exports?: unknown
    readonly imports?: unknown
    readonly workspaces?: ReadonlyArray<string> | undefined
  }
  | {
    readonly kind: "tsconfig"
    readonly extends: ReadonlyArray<string>
    readonly include?: ReadonlyArray<string> | undefined
    readonly options: CompilerOptions
  }
  | { readonly kind: "workspace"; readonly packages: ReadonlyArray<string> }

interface CompilerOptions {
  readonly baseUrl?: string | undefined
  readonly paths?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  readonly rootDir?: string | undefined
  readonly outDir?: string | undefined
  readonly declarationDir?: string | undefined
}

/** JSON with the comments and trailing commas that tsconfig files allow. */
const parseJsonc = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    // Comments out, strings kept as they are, then trailing commas out.
  }
  let out = ""
  for (let i = 0; i < text.length;) {
    const c = text[i]!
    if (c === "\"") {
      let j = i + 1
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i)
      i = end < 0 ? text.length : end
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end < 0 ? text.length : end + 2
    } else {
      out += c
      i++
    }
  }
  try {
    return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"))
  } catch {
    return undefined
  }
}

export const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
const text = (value: unknown): string | undefined => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined)
const texts = (value: unknown): Array<string> => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [])

const unquote = (value: string) => value.replace(/^(["'])(.*)\1$/, "$2")

/** `packages:` of a `pnpm-workspace.yaml`, as a block list or a flow list. */
const pnpmPackages = (yaml: string): Array<string> => {
  const found: Array<string> = []
  let inside = false
  for (const line of yaml.split(/\r?\n/)) {
    const key = /^packages\s*:\s*(.*)$/.exec(line)
    if (key !== null) {
      const flow = /^\[(.*)\]/.exec(key[1]!.trim())
      if (flow !== null) found.push(...flow[1]!.split(",").map((item) => unquote(item.trim())).filter((item) => item !== ""))
      inside = flow === null
      continue
    }
    if (!inside || /^\s*(?:#.*)?$/.test(line)) continue
    if (/^\S/.test(line)) {
      inside = false
      continue
    }
    const item = /^\s*-\s*(.+?)\s*(?:#.*)?$/.exec(line)
    if (item !== null) found.push(unquote(item[1]!))
  }
  return found
}

const configName = /^(?:tsconfig(?:\.[\w.-]+)?|jsconfig)\.json$/

/** The facts of a file that steers ECMAScript resolution (`package.json`, a tsconfig, `pnpm-workspace.yaml`); else `undefined`. */
export const configFactsOf = (path: string, content: string): ConfigFacts | undefined => {
  const name = basename(path)
  if (name === "pnpm-workspace.yaml" || name === "pnpm-workspace.yml") return { kind: "workspace", packages: pnpmPackages(content) }
  if (name === "package.json") {
    const json = record(parseJsonc(content))
    if (json === undefined) return undefined
    const workspaces = Array.isArray(json.workspaces) ? texts(json.workspaces) : record(json.workspaces) ? texts(record(json.workspaces)!.packages) : undefined
    return {
      kind: "package",
      name: text(json.name),
      main: text(json.main),
      // What a bare import of the package loads without `exports`: TypeScript reads its types first.
      entries: [json.types, json.typings, json.module, json.main].map(text).filter((entry): entry is string => entry !== undefined),
      exports: json.exports,
      imports: json.imports,
      workspaces
    }
  }
  // A config may be named anything when another `extends` it (`@co/config/base.json`).
  if (configName.test(name) || (name.endsWith(".json") && content.includes("\"compilerOptions\""))) {
    const json = record(parseJsonc(content))
    if (json === undefined) return undefined
    const options = record(json.compilerOptions) ?? {}
    const paths = record(options.paths)
    return {
      kind: "tsconfig",
      extends: typeof json.extends === "string" ? [json.extends] : texts(json.extends),
      include: Array.isArray(json.include) ? texts(json.include) : undefined,
      options: {
        baseUrl: text(options.baseUrl),
        paths: paths === undefined ? undefined : Object.fromEntries(Object.entries(paths).map(([key, value]) => [key, texts(value)])),
        rootDir: text(options.rootDir),
        outDir: text(options.outDir),
        declarationDir: text(options.declarationDir)
      }
    }
  }
  return undefined
}

export type PackageFacts = Extract<ConfigFacts, { kind: "package" }>
export type TsconfigFacts = Extract<ConfigFacts, { kind: "tsconfig" }>
