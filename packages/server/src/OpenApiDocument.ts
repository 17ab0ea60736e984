/**
 * What the OpenAPI document says and the contract's annotations cannot: a final transform of the
 * generated document (`OpenApi.Transform` on the API, applied by `OpenApi.fromApi`). Each fix
 * below says why it is here; everything else (summaries, descriptions, tags, servers) is an
 * annotation of the contract itself.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as OpenApi from "@effect/platform/OpenApi"
import { Context, Option } from "effect"
import * as AnthropicErrors from "./anthropic/AnthropicErrors.js"
import { MessageStreamEvent } from "./anthropic/MessageStreamEvents.js"
import { ModelInfo, ModelInfoList } from "./anthropic/MessagesWire.js"
import * as EventStreams from "./EventStreams.js"
import * as OpenAiErrors from "./openai/OpenAiErrors.js"
import * as JsonRpcWire from "./rpc/JsonRpcWire.js"
import * as ErrorTable from "./shared/ErrorTable.js"

type Document = Record<string, any>
type Operation = Record<string, any>

const ref = (identifier: string) => ({ $ref: `#/components/schemas/${identifier}` })
const identifierOf = (schema: { readonly ast: { readonly annotations: Record<symbol, unknown> } }): string =>
  schema.ast.annotations[Symbol.for("effect/annotation/Identifier")] as string

/** The schemas the fixes refer to, for `HttpApi.AdditionalSchemas` (they must carry an identifier). */
export const additionalSchemas = [
  ...EventStreams.schemas,
  OpenAiErrors.ErrorBody,
  AnthropicErrors.ErrorBody,
  ModelInfoList,
  ModelInfo,
  JsonRpcWire.ErrorResponse
] as const

/**
 * The streamed alternatives of the JSON answers: the platform gives an endpoint one encoding per
 * status, so the `text/event-stream` answer (chosen by the request's `stream`) is added here.
 */
const streams: ReadonlyArray<{ readonly group: string; readonly endpoint: string; readonly events: string }> = [
  { group: "openai", endpoint: "createChatCompletion", events: identifierOf(EventStreams.ChatCompletionStreamEvent) },
  { group: "responses", endpoint: "createResponse", events: identifierOf(EventStreams.ResponseStreamEvent) },
  { group: "huddle", endpoint: "start", events: identifierOf(EventStreams.HuddleStreamEvent) },
  { group: "huddle", endpoint: "message", events: identifierOf(EventStreams.HuddleStreamEvent) },
  { group: "anthropic", endpoint: "createMessage", events: identifierOf(MessageStreamEvent) }
]

/**
 * The statuses a JSON-RPC call may fail with in its method, whose body is then a JSON-RPC error
 * object (with the REST status for the bare `{method, params}` shape): the error table's entries
 * with a JSON-RPC code, and a defect (500). The edge's own failures keep the Huddle envelope.
 */
const rpcStatuses = new Map<number, string>()
for (const row of [...ErrorTable.rows.filter((row) => "rpc" in row), ErrorTable.table.Internal]) {
  const described = rpcStatuses.get(row.status)
  rpcStatuses.set(row.status, described === undefined ? row.description : `${described}; ${row.description}`)
}

const isError = (status: string) => Number(status) >= 400

/**
 * Effect writes its built-in schemas (unknown, any, `{}`) with a fixed `$id` such as
 * `/schemas/unknown` at every use; the same `$id` twice in one document makes JSON Schema tools
 * (ajv) refuse it. Dropping those markers changes no schema's meaning.
 */
const dropBuiltinIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) dropBuiltinIds(item)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>
    if (typeof record["$id"] === "string" && record["$id"].startsWith("/schemas/")) delete record["$id"]
    for (const value of Object.values(record)) dropBuiltinIds(value)
  }
}

/** Each operation of the contract, with its group, as `fromApi` places it in the document. */
const operationsOf = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>) => {
  const found: Array<{ readonly group: HttpApiGroup.HttpApiGroup.AnyWithProps; readonly endpoint: string; readonly path: string; readonly method: string }> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      // The same path template as the platform's (OpenApi.ts).
      found.push({ group, endpoint: endpoint.name, path: endpoint.path.replace(/:(\w+)\??/g, "{$1}"), method: endpoint.method.toLowerCase() })
    }
  })
  return found
}

/** The transform for `api`: `.annotate(OpenApi.Transform, OpenApiDocument.transform(api))`. */
export const transform = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
(document: Document): Document => {
  const operation = (path: string, method: string): Operation => {
    const found = document["paths"]?.[path]?.[method]
    if (found === undefined) throw new Error(`OpenApiDocument: no operation ${method.toUpperCase()} ${path}`)
    return found
  }
  const operations = operationsOf(api)
  for (const { endpoint, group, method, path } of operations) {
    const op = operation(path, method)
    const dialect = Option.getOrElse(Context.getOption(group.annotations, ErrorTable.Dialect), () => "huddle" as const)
    if (dialect === "openai" || dialect === "anthropic") {
      // The edge answers every failure on these paths in the group's envelope (edge/ErrorTranslation.ts),
      // while the platform documents the error schemas declared, which are Huddle's envelope.
      const body = ref(identifierOf(dialect === "openai" ? OpenAiErrors.ErrorBody : AnthropicErrors.ErrorBody))
      for (const [status, response] of Object.entries(op["responses"] as Record<string, any>)) {
        if (isError(status)) response.content = { "application/json": { schema: body } }
      }
    } else if (dialect === "json-rpc") {
      // A call failing in its method is a JSON-RPC error object, answered 200 to `jsonrpc: "2.0"`
      // requests (the 200 schema says so) and with the REST status to the bare shape; statuses
      // the group does not declare (402, 403, 502 …) are only reachable that way.
      for (const [status, description] of rpcStatuses) {
        const response = op["responses"][status]
        const body = ref(identifierOf(JsonRpcWire.ErrorResponse))
        op["responses"][status] = response === undefined
          ? { description, content: { "application/json": { schema: body } } }
          : { ...response, content: { "application/json": { schema: { anyOf: [response.content["application/json"].schema, body] } } } }
      }
    }
    const stream = streams.find((stream) => stream.group === group.identifier && stream.endpoint === endpoint)
    if (stream !== undefined) {
      const ok = op["responses"]["200"]
      ok.content = { ...ok.content, "text/event-stream": { schema: ref(stream.events) } }
    }
  }
  for (const stream of streams) {
    if (!operations.some(({ endpoint, group }) => group.identifier === stream.group && endpoint === stream.endpoint)) {
      throw new Error(`OpenApiDocument: no endpoint ${stream.group}.${stream.endpoint} to stream`)
    }
  }
  dropBuiltinIds(document)
  // The platform's license annotation has only `name` and `url`; OpenAPI 3.1 names a license by
  // its SPDX `identifier`, which validators (swagger-parser) expect.
  document["info"]["license"] = license
  return document
}

/** The project's licence (the `LICENSE` file at the repository's root). */
export const license = { name: "Apache-2.0", identifier: "Apache-2.0" } as const

/** Where the document says the API is served: relative, so it holds for every deployment. */
export const servers: ReadonlyArray<OpenApi.OpenAPISpecServer> = [
  { url: "/", description: "The server this document is served from" }
]
