import { HttpApiSchema } from "@effect/platform"
import * as Errors from "@huddle/domain/shared/Errors"
import * as EdgeErrors from "@huddle/server/shared/EdgeErrors"
import * as Envelope from "@huddle/server/shared/Envelope"
import * as ErrorTable from "@huddle/server/shared/ErrorTable"
import * as OpenAiErrors from "@huddle/server/openai/OpenAiErrors"
import { Api } from "@huddle/server/Api"
import { dialectOf } from "@huddle/server/edge/ErrorTranslation"
import * as RpcErrors from "@huddle/server/rpc/RpcErrors"
import { Context, Schema } from "effect"
import { describe, expect, it } from "vitest"

type ErrorClass = new(props: { readonly message: string }) => { readonly _tag: string; readonly message: string }

/** Every typed error class the domain and the edge export, by tag. */
const classes = new Map<string, ErrorClass>()
for (const exported of [...Object.values(Errors), ...Object.values(EdgeErrors)]) {
  if (Schema.isSchema(exported) && typeof exported === "function" && "fields" in exported) {
    const Class = exported as unknown as ErrorClass
    classes.set(new Class({ message: "probe" })._tag, Class)
  }
}

/** The Huddle envelope's error schemas: those that carry a status. */
const isErrorSchema = (value: unknown): value is Schema.Schema<unknown, Envelope.ErrorBody> =>
  Schema.isSchema(value) && value.ast.annotations[HttpApiSchema.AnnotationStatus] !== undefined
const exported: ReadonlyArray<unknown> = Object.values(Envelope)
const envelopes = exported.filter(isErrorSchema)

/** The rows answered by Node's HTTP parser, before any handler: no error class, no schema. */
const beforeHandlers = new Set<ErrorTable.Tag>(["RequestHeadersTooLarge"])

describe("the one error table", () => {
  it("lists every typed error of the domain and the edge, and nothing that is not one", () => {
    expect([...classes.keys()].filter((tag) => !ErrorTable.isTag(tag))).toEqual([])
    expect(ErrorTable.rows.filter((row) => !classes.has(row.tag) && !beforeHandlers.has(row.tag)).map((row) => row.tag))
      .toEqual([])
    expect(envelopes).toHaveLength(ErrorTable.rows.length - beforeHandlers.size)
  })

  it("gives each error its CODE by one rule, the one failed intents are recorded with", () => {
    for (const row of ErrorTable.rows) expect(row.code).toBe(Errors.codeOf({ _tag: row.tag }))
    expect(new Set(ErrorTable.rows.map((row) => row.code)).size).toBe(ErrorTable.rows.length)
  })

  describe.each(ErrorTable.rows.filter((row) => !beforeHandlers.has(row.tag)))("$tag", (row) => {
    const Class = classes.get(row.tag)!
    const error = new Class({ message: `a ${row.tag} happened` })

    it("answers the Huddle envelope with the table's status and CODE", () => {
      const schemas = envelopes.filter((schema) => Schema.is(schema)(error))
      expect(schemas).toHaveLength(1)
      const schema = schemas[0]!
      expect(HttpApiSchema.getStatusError(schema)).toBe(row.status)
      expect(Schema.encodeSync(schema)(error)).toEqual({ error: row.code, message: error.message })
    })

    it("answers OpenAI's envelope with the same status and CODE", () => {
      expect(OpenAiErrors.fromError(error)).toEqual({
        status: row.status,
        body: { error: { message: error.message, type: OpenAiErrors.typeFor(row.status), param: null, code: row.code } }
      })
    })

    it("answers JSON-RPC with its application code, the same CODE in data.error and the same status", () => {
      if (row.tag === "Internal" || row.tag === "ServiceUnavailable") {
        const rpc = RpcErrors.internalError(error as EdgeErrors.Internal | EdgeErrors.ServiceUnavailable)
        expect(RpcErrors.toObject(rpc)).toEqual({
          code: RpcErrors.InternalErrorCode,
          message: "Internal error",
          data: { error: row.code, message: error.message }
        })
        expect(rpc.status).toBe(row.status)
        return
      }
      if (!("rpc" in row)) {
        // Only the transport raises it: no method fails with it, so JSON-RPC never answers it.
        expect(Object.keys(RpcErrors.applicationCodes)).not.toContain(row.tag)
        return
      }
      const entry = row.tag === "RateLimited"
        ? RpcErrors.rateLimited
        : RpcErrors.applicationCodes[row.tag as RpcErrors.DomainErrorTag]
      expect(entry).toEqual({ code: row.rpc.code, error: row.code, status: row.status, meaning: row.rpc.meaning })
      if (row.tag !== "RateLimited") {
        const rpc = RpcErrors.fromDomain(error as RpcErrors.DomainError)
        expect(RpcErrors.toObject(rpc)).toEqual({
          code: row.rpc.code,
          message: error.message,
          data: { error: row.code, message: error.message }
        })
        expect(rpc.status).toBe(row.status)
      }
    })
  })

  it("gives every JSON-RPC application code to one error only, within JSON-RPC's server range", () => {
    const codes = ErrorTable.rows.flatMap((row) => ("rpc" in row ? [row.rpc.code] : []))
    expect(new Set(codes).size).toBe(codes.length)
    for (const code of codes) expect(code <= -32000 && code >= -32099).toBe(true)
  })
})

describe("the error dialect", () => {
  it("is the endpoint group's: every path of a group is answered in the dialect its annotation names", () => {
    for (const group of Object.values(Api.groups)) {
      const dialect = Context.getOrElse(group.annotations, ErrorTable.Dialect, () => "huddle" as const)
      for (const endpoint of Object.values(group.endpoints)) {
        const path = endpoint.path.replace(/:[a-z_]+/gi, "x")
        expect(dialectOf(path), `${group.identifier}: ${endpoint.path}`).toBe(dialect)
      }
    }
  })

  it("is OpenAI's on the OpenAI-compatible paths, mistyped ones under them included, and JSON-RPC's on /v1/rpc", () => {
    expect(["/v1/chat/completions", "/v1/models", "/v1/models/gpt-x", "/v1/models/a/b"].map(dialectOf))
      .toEqual(["openai", "openai", "openai", "openai"])
    expect(dialectOf("/v1/rpc")).toBe("json-rpc")
    expect(["/v1/orgs", "/v1/responsesx", "/v1/embedding", "/healthz", "/nope"].map(dialectOf))
      .toEqual(["huddle", "huddle", "huddle", "huddle", "huddle"])
  })

  it("is OpenAI's on the resources of OpenAI's API that Huddle does not serve, and only there", () => {
    expect(["/v1/responses", "/v1/responses/resp_1", "/v1/chat/completions/x", "/v1/chat", "/v1/embeddings", "/v1/audio/speech", "/v1/fine_tuning/jobs"].map(dialectOf))
      .toEqual(["openai", "openai", "openai", "openai", "openai", "openai", "openai"])
  })
})
