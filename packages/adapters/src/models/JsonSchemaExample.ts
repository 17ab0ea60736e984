/**
 * A deterministic example value for a JSON Schema: what the offline model answers with when a
 * tool's arguments or a structured answer must validate against a schema.
 *
 * It handles what tool and response schemas use in practice: `type` (one or several), `const`,
 * `enum`, objects (required properties always; the others too, near the top), arrays (`items`,
 * `prefixItems`, `minItems`/`maxItems`), strings (`minLength`/`maxLength`, common `format`s),
 * numbers and integers (`minimum`, `maximum`, their exclusive forms, `multipleOf`), `anyOf`/
 * `oneOf` (the first branch), `allOf` (merged), and local `$ref`s (`#/$defs/…`, `#/definitions/…`).
 * A `pattern` is not followed: no general generator for regular expressions is worth its weight.
 *
 * ```ts
 * exampleOf({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }, { text: "Paris" })
 * // { city: "Paris" }
 * ```
 */

export interface Hints {
  /** The text a string takes (cut or padded to the schema's lengths). */
  readonly text: string
}

type Schema = { readonly [key: string]: unknown }

const isSchema = (u: unknown): u is Schema => typeof u === "object" && u !== null && !Array.isArray(u)

/** Below this depth, optional properties are left out, so that a recursive schema ends. */
const optionalDepth = 2
/** Past this depth only what is required is built, and `$ref`s stop being followed. */
const maxDepth = 12

const formats: Readonly<Record<string, string>> = {
  "date-time": "2024-01-01T00:00:00Z",
  date: "2024-01-01",
  time: "00:00:00Z",
  email: "offline@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1"
}

const resolveRef = (root: Schema, ref: string): Schema | undefined => {
  if (!ref.startsWith("#")) return undefined
  let node: unknown = root
  for (const part of ref.slice(1).split("/").filter((p) => p.length > 0)) {
    if (!isSchema(node)) return undefined
    node = node[part.replace(/~1/g, "/").replace(/~0/g, "~")]
  }
  return isSchema(node) ? node : undefined
}

const numberOf = (schema: Schema, integer: boolean): number => {
  const num = (key: string) => (typeof schema[key] === "number" ? (schema[key] as number) : undefined)
  const step = num("multipleOf") ?? (integer ? 1 : undefined)
  let high = num("maximum")
  const exclusiveHigh = num("exclusiveMaximum")
  let low = num("minimum")
  const exclusiveLow = num("exclusiveMinimum")
  // Without a grid, a point strictly inside a narrow open range.
  const inside = (from: number, to: number | undefined) => (to === undefined ? 1 : Math.min(1, (to - from) / 2))
  if (exclusiveLow !== undefined) {
    low = Math.max(low ?? -Infinity, exclusiveLow + (step ?? inside(exclusiveLow, high ?? exclusiveHigh)))
  }
  if (exclusiveHigh !== undefined) {
    high = Math.min(high ?? Infinity, exclusiveHigh - (step ?? inside(low ?? exclusiveLow ?? exclusiveHigh - 2, exclusiveHigh)))
  }
  // Zero when allowed, else the nearest bound, on the step's grid.
  let value = low !== undefined && low > 0 ? low : high !== undefined && high < 0 ? high : 0
  if (step !== undefined && step > 0) {
    value = low !== undefined && value === low ? Math.ceil(value / step) * step : Math.floor(value / step) * step
  }
  return value
}

const stringOf = (schema: Schema, hints: Hints): string => {
  const format = typeof schema.format === "string" ? formats[schema.format] : undefined
  let text = format ?? (hints.text.length > 0 ? hints.text : "offline")
  const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined
  const min = typeof schema.minLength === "number" ? schema.minLength : 0
  if (max !== undefined && text.length > max) text = text.slice(0, max)
  if (text.length < min) text = text.padEnd(min, ".")
  return text
}

const firstType = (type: unknown): string | undefined => {
  if (typeof type === "string") return type
  if (Array.isArray(type)) {
    const types = type.filter((t): t is string => typeof t === "string")
    return types.find((t) => t !== "null") ?? types[0]
  }
  return undefined
}

const mergeAll = (root: Schema, schemas: ReadonlyArray<unknown>, depth: number): Schema => {
  const merged: { [key: string]: unknown } = {}
  const properties: { [key: string]: unknown } = {}
  const required = new Set<string>()
  for (const part of schemas) {
    const schema = deref(root, part, depth)
    if (schema === undefined) continue
    Object.assign(merged, schema)
    if (isSchema(schema.properties)) Object.assign(properties, schema.properties)
    if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === "string") required.add(name)
  }
  if (Object.keys(properties).length > 0) merged.properties = properties
  if (required.size > 0) merged.required = [...required]
  delete merged.allOf
  return merged
}

const deref = (root: Schema, schema: unknown, depth: number): Schema | undefined => {
  let node = schema
  for (let hops = 0; isSchema(node) && typeof node.$ref === "string" && hops < 8 && depth < maxDepth; hops++) {
    node = resolveRef(root, node.$ref)
  }
  return isSchema(node) ? node : undefined
}

const build = (root: Schema, raw: unknown, hints: Hints, depth: number): unknown => {
  if (raw === true || raw === undefined) return hints.text
  const schema = deref(root, raw, depth)
  if (schema === undefined) return null
  if ("const" in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (Array.isArray(schema.allOf)) return build(root, mergeAll(root, [schema, ...schema.allOf], depth), hints, depth)
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (branches !== undefined && branches.length > 0) {
    // A nullable field is written `anyOf: [X, {type: "null"}]` as often as the other way round.
    const branch = branches.find((b) => !(isSchema(b) && b.type === "null")) ?? branches[0]
    return build(root, branch, hints, depth)
  }
  const type = firstType(schema.type) ??
    (isSchema(schema.properties) ? "object" : schema.items !== undefined || schema.prefixItems !== undefined ? "array" : "string")
  switch (type) {
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {}
      const required = Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === "string") : []
      const names = depth < optionalDepth ? [...new Set([...required, ...Object.keys(properties)])] : required
      const value: { [key: string]: unknown } = {}
      for (const name of names) value[name] = build(root, properties[name], hints, depth + 1)
      return value
    }
    case "array": {
      const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : []
      const items = Array.isArray(schema.items) ? undefined : schema.items
      const min = typeof schema.minItems === "number" ? schema.minItems : 0
      const max = typeof schema.maxItems === "number" ? schema.maxItems : Infinity
      // One element shows the shape; more only when `minItems` asks.
      const count = Math.min(max, Math.max(min, prefix.length, items === false || depth >= maxDepth ? 0 : 1))
      return Array.from({ length: count }, (_, i) => build(root, i < prefix.length ? prefix[i] : items, hints, depth + 1))
    }
    case "integer":
      return numberOf(schema, true)
    case "number":
      return numberOf(schema, false)
    case "boolean":
      return true
    case "null":
      return null
    default:
      return stringOf(schema, hints)
  }
}

/** A value valid against `schema` (within the limits above), the same every time. */
export const exampleOf = (schema: unknown, hints: Hints): unknown =>
  build(isSchema(schema) ? schema : {}, schema === undefined ? {} : schema, hints, 0)
