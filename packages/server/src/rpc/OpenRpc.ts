/**
 * The OpenRPC 1.2 document (https://spec.open-rpc.org) that `rpc.discover` answers with. Every
 * JSON Schema in it is generated from the Effect schemas the methods decode their params and
 * encode their results with, so the document cannot drift from what the endpoint does. Named
 * schemas (those with an identifier, e.g. `Intent`) are collected once under
 * `components.schemas` and referenced from the methods.
 */
import { JSONSchema, Schema } from "effect"
import type { Method } from "./JsonRpc.js"
import * as RpcErrors from "./RpcErrors.js"

export const openRpcVersion = "1.2.6"

const JsonSchemaValue = Schema.Object.annotations({ description: "A JSON Schema (draft-07)" })

const ContentDescriptor = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  required: Schema.optional(Schema.Boolean),
  schema: JsonSchemaValue
})

const ErrorDescription = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Struct({ error: Schema.String }))
})

const MethodDescription = Schema.Struct({
  name: Schema.String,
  summary: Schema.String,
  description: Schema.String,
  paramStructure: Schema.Literal("by-name", "by-position", "either"),
  params: Schema.Array(ContentDescriptor),
  result: ContentDescriptor,
  errors: Schema.Array(ErrorDescription),
  /** Our extension: the rate-limit class the method counts against. */
  "x-rate-class": Schema.String
})

export const OpenRpcDocument = Schema.Struct({
  openrpc: Schema.String,
  info: Schema.Struct({ title: Schema.String, version: Schema.String, description: Schema.String }),
  servers: Schema.Array(Schema.Struct({ name: Schema.String, url: Schema.String })),
  methods: Schema.Array(MethodDescription),
  components: Schema.Struct({
    schemas: Schema.Record({ key: Schema.String, value: JsonSchemaValue })
  })
}).annotations({ identifier: "OpenRpcDocument", description: "An OpenRPC 1.2 document describing this endpoint" })
export type OpenRpcDocument = typeof OpenRpcDocument.Type

const definitionPath = "#/components/schemas/"

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** One content descriptor per named parameter of a params struct. */
const paramDescriptors = (schema: JSONSchema.JsonSchema7): ReadonlyArray<typeof ContentDescriptor.Type> => {
  if (!("properties" in schema) || !isObject(schema.properties)) return []
  const required = new Set("required" in schema && Array.isArray(schema.required) ? schema.required : [])
  return Object.entries(schema.properties).flatMap(([name, property]) => {
    if (!isObject(property)) return []
    const description = typeof property.description === "string" ? { description: property.description } : {}
    return [{ name, ...description, required: required.has(name), schema: property }]
  })
}

/**
 * A copy without the `$id`s Effect gives its built-in schemas (`/schemas/object`,
 * `/schemas/unknown` …): the same id on several different subschemas makes ajv refuse to compile
 * the document ("resolves to more than one schema"), and nothing refers to them. Only string ids
 * under `/schemas/` go; a property named `$id` (a schema, not a string) is kept.
 */
const withoutBuiltinIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutBuiltinIds) as A
  if (!isObject(value)) return value
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, entry]) =>
      key === "$id" && typeof entry === "string" && entry.startsWith("/schemas/") ? [] : [[key, withoutBuiltinIds(entry)]]
    )
  ) as A
}

export interface Info {
  readonly title: string
  readonly version: string
  readonly description: string
}

/**
 * The document for a method table, built once; given the endpoint's absolute URL (which OpenRPC
 * tooling requires: `servers[].url` is a URI), the document served there.
 */
export const document = <C>(methods: ReadonlyArray<Method<C>>, info: Info): (url: string) => OpenRpcDocument => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const jsonSchema = (schema: Schema.Schema.AnyNoContext) =>
    withoutBuiltinIds(JSONSchema.fromAST(schema.ast, { definitions, definitionPath }))
  const described = methods.map((m) => ({
    name: m.name,
    summary: m.summary,
    description: m.description,
    paramStructure: "by-name" as const,
    params: paramDescriptors(jsonSchema(m.params)),
    result: { name: m.resultName, schema: jsonSchema(m.result) },
    errors: [
      ...m.errors.map((tag) => RpcErrors.applicationCodes[tag]),
      RpcErrors.rateLimited
    ].map((entry) => ({ code: entry.code, message: entry.meaning, data: { error: entry.error } })),
    "x-rate-class": m.rateClass
  }))
  const schemas = withoutBuiltinIds(definitions)
  return (url) => ({
    openrpc: openRpcVersion,
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ name: "huddle", url }],
    methods: described,
    components: { schemas }
  })
}
