/**
 * The domain's capability folders form layers: a folder imports only folders below it
 * (docs/architecture.md, decision 0045). A cycle between folders, of any length, means two
 * capabilities can no longer be read, tested or moved apart; this names the files that make one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = fileURLToPath(new URL("../src/", import.meta.url))

type Graph = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<string>>>

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : []
  })

const folderOf = (path: string): string | undefined => {
  const parts = relative(src, path).split(sep)
  return parts.length > 1 ? parts[0] : undefined
}

/** folder → imported folder → the imports that make the edge (`file -> specifier`). */
const folderGraph = (): Graph => {
  const graph = new Map<string, Map<string, Array<string>>>()
  for (const file of sources(src)) {
    const from = folderOf(file)
    if (from === undefined) continue
    const edges = graph.get(from) ?? new Map<string, Array<string>>()
    graph.set(from, edges)
    const text = readFileSync(file, "utf8")
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      const to = folderOf(resolve(dirname(file), specifier!))
      if (to === undefined || to === from) continue
      edges.set(to, [...(edges.get(to) ?? []), `${relative(src, file)} -> ${specifier}`])
    }
  }
  return graph
}

/** Every elementary cycle, each once, as the folders in order from its smallest. */
const cyclesOf = (graph: Graph): Array<Array<string>> => {
  const folders = [...graph.keys()].sort()
  const cycles: Array<Array<string>> = []
  for (const start of folders) {
    const walk = (path: Array<string>) => {
      for (const next of graph.get(path[path.length - 1]!)?.keys() ?? []) {
        if (next === start) cycles.push([...path])
        else if (next > start && !path.includes(next)) walk([...path, next])
      }
    }
    walk([start])
  }
  return cycles
}

/** A cycle as a reader fixes it: each edge with the imports that make it. */
const describeCycle = (graph: Graph, cycle: ReadonlyArray<string>): string =>
  cycle.map((from, i) => {
    const to = cycle[(i + 1) % cycle.length]!
    return `${from} -> ${to}\n${graph.get(from)!.get(to)!.map((edge) => `    ${edge}`).join("\n")}`
  }).join("\n")

describe("the domain's folders", () => {
  const graph = folderGraph()

  it("import each other in no cycle, of any length", () => {
    const offending = cyclesOf(graph).map((cycle) => describeCycle(graph, cycle))
    expect(offending, `folder cycles:\n${offending.join("\n\n")}`).toEqual([])
  })

  it("are read: the scan sees the folders and their imports", () => {
    expect([...graph.keys()]).toEqual(expect.arrayContaining(["shared", "identity", "credits", "orgs", "accounts", "answers", "huddle"]))
    expect(graph.get("huddle")?.get("credits")).toEqual(expect.arrayContaining(["huddle/IntentExpiry.ts -> ../credits/ReservationExpiry.js"]))
  })

  it("finds a cycle of any length and the files that make it", () => {
    const edge = (file: string) => [file]
    const synthetic: Graph = new Map([
      ["a", new Map([["b", edge("a/A.ts -> ../b/B.js")]])],
      ["b", new Map([["c", edge("b/B.ts -> ../c/C.js")]])],
      ["c", new Map([["a", edge("c/C.ts -> ../a/A.js")], ["d", edge("c/C.ts -> ../d/D.js")]])],
      ["d", new Map()]
    ])
    const cycles = cyclesOf(synthetic)
    expect(cycles).toEqual([["a", "b", "c"]])
    expect(describeCycle(synthetic, cycles[0]!)).toContain("c/C.ts -> ../a/A.js")
  })
})
