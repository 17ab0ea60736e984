/**
 * One module reserves and settles credits for model calls: `MeteredCall`, which takes the
 * `Credits` service and hands it to its own parts (its reservations in `CallReservation.ts`, its
 * run in `MeteredRun.ts`). Any other module that takes the `Credits` service (or the
 * `CreditStore` port's reservations) would be a second money path; this keeps it from creeping back.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const packages = fileURLToPath(new URL("../../", import.meta.url))

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : []
  })

const all = ["domain", "adapters", "server"].flatMap((pkg) => sources(join(packages, pkg, "src")))

/** The files that import the value `name` (not only its type) from a module whose file is `module`. */
const importersOf = (name: string, module: string): Array<string> =>
  all.filter((file) => {
    const text = readFileSync(file, "utf8")
    const imports = text.matchAll(/import\s+(type\s+)?(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+"([^"]+)"/g)
    for (const [, typeOnly, names, from] of imports) {
      if (typeOnly !== undefined || !from!.replace(/\.js$/, "").endsWith(`/${module}`)) continue
      if (names!.startsWith("*")) return true
      const values = names!.slice(1, -1).split(",").map((part) => part.trim()).filter((part) => !part.startsWith("type "))
      if (values.some((part) => part.split(/\s+as\s+/)[0] === name)) return true
    }
    return false
  }).map((file) => basename(file)).sort()

/** The files that import the type `name` (alone, not the value) from a module whose file is `module`. */
const typeImportersOf = (name: string, module: string): Array<string> =>
  all.filter((file) => {
    const text = readFileSync(file, "utf8")
    const imports = text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)"/g)
    for (const [, typeOnly, names, from] of imports) {
      if (!from!.replace(/\.js$/, "").endsWith(`/${module}`)) continue
      const types = names!.split(",").map((part) => part.trim()).flatMap((part) =>
        typeOnly !== undefined ? [part] : part.startsWith("type ") ? [part.slice(5).trim()] : []
      )
      if (types.some((part) => part.split(/\s+as\s+/)[0] === name)) return true
    }
    return false
  }).map((file) => basename(file)).sort()

describe("the one metered model call", () => {
  it("is the only service that takes Credits (the domain's composition provides it)", () => {
    expect(importersOf("Credits", "Credits")).toEqual(["Domain.ts", "MeteredCall.ts"])
  })

  it("hands the Credits service only to its own parts: its reservations, its run and its whole (unstreamed) call", () => {
    expect(typeImportersOf("Service", "Credits")).toEqual(["CallReservation.ts", "MeteredRun.ts", "WholeCall.ts"])
  })

  it("finds what it looks for: the files scanned include the metered call and its callers", () => {
    const names = all.map((file) => basename(file))
    expect(names).toEqual(expect.arrayContaining(["MeteredCall.ts", "Completions.ts", "IntentPipeline.ts", "Credits.ts"]))
  })

  it("leaves reservations on the CreditStore port to the Credits service and the store itself", () => {
    const reserving = all
      .filter((file) => /\.reserve\(\{/.test(readFileSync(file, "utf8")))
      .map((file) => basename(file))
      .sort()
    // (The leased store passes a reservation on to the SQL store it wraps only whole, once stopping.
    // The metered call reserves in its `CallReservation.ts`.)
    expect(reserving).toEqual(["CallReservation.ts", "Credits.ts"])
  })
})
