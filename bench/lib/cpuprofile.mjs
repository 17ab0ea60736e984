/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and says where the CPU went: by kind of
 * code (the frame that was running), by the nearest Huddle frame on the stack (which part of
 * Huddle caused it), and the top functions, self and inclusive.
 */
import { readFileSync } from "node:fs"

const special = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"])

/** The kind of code a frame belongs to, from its script URL. */
export const categoryOf = (frame) => {
  const { functionName: name, url } = frame
  if (special.has(name)) return name
  if (url === "" || url === undefined) {
    if (/^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString|writeUcs2String)$/.test(name)) return "socket writes (syscalls)"
    if (name === "parse" || name === "stringify") return "JSON (parse, stringify)"
    return "V8 builtins/native"
  }
  if (url.startsWith("node:")) {
    if (/node:internal\/crypto/.test(url)) return "Node crypto (hashes, random bytes)"
    if (/node:internal\/(modules|bootstrap)|node:internal\/vm/.test(url)) return "Node module loading (start-up)"
    if (/node:(events|timers|internal\/timers|internal\/process\/task_queues|internal\/async_hooks)/.test(url)) return "Node events, timers, task queues"
    if (/node:(_http|http|internal\/http)/.test(url)) return "Node http"
    if (/node:(net|internal\/stream_base|internal\/net|internal\/dns)/.test(url)) return "Node net/sockets"
    if (/stream/.test(url)) return "Node streams"
    return "Node other internals"
  }
  const path = url.replace(/^file:\/\//, "")
  const m = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/)
  if (m) {
    const [, pkg, rest] = m
    if (pkg === "effect") {
      if (/internal\/(fiberRuntime|core|core-effect|runtime|fiberRefs|fiberRefs\/|context|fiberScope|scheduler|effectable|pipeable|option|either|cause)|Function|Utils|Scheduler|FiberRef|Context|Effectable/.test(rest)) return "effect: runtime (fibers, core)"
      if (/Schema|ParseResult|SchemaAST|schema\//.test(rest)) return "effect: Schema (decode/encode)"
      if (/logger|Logger|logSpan|LogLevel|Inspectable|Cause|cause/.test(rest)) return "effect: logger/inspect"
      if (/stream|Stream|channel|Channel|sink|Sink|queue|Queue|pubsub|Mailbox|mailbox/.test(rest)) return "effect: Stream/Channel/Queue"
      return "effect: other"
    }
    if (pkg === "@effect/platform" || pkg === "@effect/platform-node" || pkg === "@effect/platform-node-shared") return "@effect/platform (HTTP server/client)"
    if (pkg === "@effect/sql" || pkg === "@effect/sql-pg") return "@effect/sql"
    if (pkg === "pg" || pkg.startsWith("pg-") || pkg === "postgres-array" || pkg === "postgres-date" || pkg === "pgpass") return "pg driver"
    if (pkg === "undici") return "undici (upstream client)"
    if (pkg === "@electric-sql/pglite") return "PGlite (WASM)"
    return `npm: ${pkg}`
  }
  const own = path.match(/packages\/(domain|adapters|server|testkit)\/dist\/(.*)$/)
  if (own) return `huddle: ${own[1]}`
  return "other"
}

/** The request phase a Huddle module serves (for the nearest Huddle frame of a sample). */
export const phaseOf = (modulePath) => {
  const rules = [
    [/edge\/|HealthHttp|Server\.js/, "edge: request id, errors, access log"],
    [/Authentication|AuthenticatedLive|ApiKey|SecretTokens|Security|withPrincipal|Principal/, "authentication (API key)"],
    [/RateLimit/, "rate limit"],
    [/RequestScope|OrgAccess|Membership/, "request scope (org, membership)"],
    [/OrgSettings|Policies|Policy|Preference|AccountSettings/, "settings and policy"],
    [/ContextAssembly|Memor|Workspace/, "memories"],
    [/MeteredCall|Credits|CreditStore|UlidIds|Ids/, "metered call: credits (reserve, settle) and ids"],
    [/Router|Provider|Upstream|models\//, "upstream call (request, SSE parsing)"],
    [/OpenAi|Completions|streaming\//, "chat completions (validation, OpenAI encoding, stream framing)"]
  ]
  for (const [pattern, phase] of rules) if (pattern.test(modulePath)) return phase
  return `other Huddle code (${modulePath})`
}

/** Subsystems: a sample counts for each one that has a frame anywhere on its stack (they overlap). */
const subsystems = [
  ["Effect Stream/Channel machinery (upstream SSE → events → response body)", /node_modules\/effect\/dist\/esm\/internal\/(channel|stream|sink|take)|node_modules\/effect\/dist\/esm\/(Stream|Channel)\.js/],
  ["PostgreSQL client (@effect/sql, @effect/sql-pg, pg, pg-pool, pg-protocol)", /node_modules\/(@effect\/sql|@effect\/sql-pg|pg|pg-pool|pg-protocol)\//],
  ["undici (the upstream HTTP client)", /node_modules\/undici\//],
  ["Effect Schema (decoding and encoding)", /node_modules\/effect\/dist\/esm\/(ParseResult|Schema|SchemaAST)\.js/],
  ["@effect/platform HTTP server and client", /node_modules\/@effect\/platform(-node|-node-shared)?\//],
  ["SSE parser (@effect/experimental/Sse)", /node_modules\/@effect\/experimental\/dist\/esm\/Sse\.js/],
  ["ULID ids (ulid + crypto.getRandomValues)", /node_modules\/ulid\/|UlidIds\.js/]
]

const isHuddle = (frame) => /packages\/(domain|adapters|server)\/dist\//.test(frame.url ?? "")
const shortUrl = (url) =>
  (url ?? "")
    .replace(/^file:\/\//, "")
    .replace(/^.*node_modules\//, "")
    .replace(/^.*packages\//, "")
    .replace(/\/dist\/esm\//, "/")
    .replace(/\/dist\//, "/")
const keyOf = (frame) => `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`

/**
 * `window` (optional): `{ fromUs, toUs }`, microseconds since the profile's start, to keep only
 * the samples taken under load.
 */
export const analyze = (path, window) => {
  const profile = JSON.parse(readFileSync(path, "utf8"))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const self = new Map()
  const inclusive = new Map()
  const categories = new Map()
  const owners = new Map()
  const phases = new Map()
  const systems = new Map()
  let total = 0
  let busy = 0
  let t = 0
  const add = (map, key, n) => map.set(key, (map.get(key) ?? 0) + n)
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    if (window && (t < window.fromUs || t > window.toUs)) continue
    const interval = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i]
    const node = byId.get(profile.samples[i])
    total += interval
    const category = categoryOf(node.callFrame)
    add(categories, category, interval)
    if (node.callFrame.functionName === "(idle)") continue
    busy += interval
    add(self, keyOf(node.callFrame), interval)
    const seen = new Set()
    const inSystem = new Set()
    let owner
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id).callFrame
      const key = keyOf(frame)
      if (!seen.has(key)) {
        seen.add(key)
        add(inclusive, key, interval)
      }
      if (owner === undefined && isHuddle(frame)) owner = `${shortUrl(frame.url)} ${frame.functionName || "(anonymous)"}`
      for (const [name, pattern] of subsystems) if (pattern.test(frame.url ?? "")) inSystem.add(name)
    }
    for (const name of inSystem) add(systems, name, interval)
    add(owners, owner ?? `(no Huddle frame) ${category}`, interval)
    add(phases, owner === undefined ? "(no Huddle frame on the stack: Effect runtime continuations, I/O callbacks, GC)" : phaseOf(owner), interval)
  }
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, us]) => ({ key, ms: us / 1000, pctBusy: (100 * us) / busy }))
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    idlePct: (100 * (total - busy)) / total,
    categories: top(categories, 40).map((c) => ({ ...c, pctBusy: c.key === "(idle)" ? NaN : c.pctBusy })),
    owners: top(owners, 40),
    phases: top(phases, 20),
    systems: top(systems, 20),
    self: top(self, 40),
    inclusive: top(inclusive, 60)
  }
}

export const format = (summary, n = 25) => {
  const lines = []
  const pct = (x) => (Number.isFinite(x) ? `${x.toFixed(1).padStart(5)}%` : "     –")
  lines.push(`sampled ${summary.totalMs.toFixed(0)} ms, busy ${summary.busyMs.toFixed(0)} ms (idle ${summary.idlePct.toFixed(1)}%); percentages of busy time`)
  lines.push("", "By kind of code (the running frame):")
  for (const c of summary.categories.filter((c) => c.key !== "(idle)").slice(0, n)) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  lines.push("", "By subsystem anywhere on the stack (inclusive; they overlap):")
  for (const c of summary.systems) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  lines.push("", "By request phase (of the nearest Huddle frame on the stack):")
  for (const c of summary.phases) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  lines.push("", "By nearest Huddle frame on the stack (which part of Huddle the work was for):")
  for (const c of summary.owners.slice(0, n)) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  lines.push("", "Top functions, self time:")
  for (const c of summary.self.slice(0, n)) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  lines.push("", "Top functions, inclusive time:")
  for (const c of summary.inclusive.slice(0, n + 15)) lines.push(`  ${pct(c.pctBusy)}  ${c.key}`)
  return lines.join("\n")
}
