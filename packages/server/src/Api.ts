/**
 * The HTTP contract of Huddle: every endpoint, its schemas and its errors. Clients (and the
 * OpenAPI document) derive from this; `ApiLive.ts` serves it with the handlers of each
 * capability's folder.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Option, Schema } from "effect"
import { ApiKeysApi } from "./accounts/ApiKeysApi.js"
import { AuthApi } from "./accounts/AuthApi.js"
import { MessagesApi } from "./anthropic/MessagesApi.js"
import { MeApi } from "./accounts/MeApi.js"
import { HealthApi } from "./health/HealthApi.js"
import { HuddleApi } from "./huddle/HuddleApi.js"
import { MemoriesApi } from "./memories/MemoriesApi.js"
import { EmbeddingsApi } from "./openai/EmbeddingsApi.js"
import { OpenAiApi } from "./openai/OpenAiApi.js"
import { ResponsesApi } from "./openai/ResponsesApi.js"
import * as OpenApiDocument from "./OpenApiDocument.js"
import { OperatorApi } from "./operator/OperatorApi.js"
import { OrgAdminApi } from "./orgs/OrgAdminApi.js"
import { OrgsApi } from "./orgs/OrgsApi.js"
import { RpcApi } from "./rpc/RpcApi.js"
import * as Envelope from "./shared/Envelope.js"
import { WorkspacesApi } from "./workspaces/WorkspacesApi.js"

/**
 * HttpApi decodes a body with the payload schema's own parse options only, and Schema's default
 * drops unknown fields: a misspelt field would be ignored, and a PUT that replaces settings would
 * erase them. Set here once per group: an unknown field is refused, 400 naming it, as the OpenAPI
 * document (`additionalProperties: false`) says. An annotation changes no type, so the group
 * keeps its own.
 */
const refuseUnknownFields = <
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  E,
  R,
  TopLevel extends boolean
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>) => {
  let strict: HttpApiGroup.HttpApiGroup<Id, HttpApiEndpoint.HttpApiEndpoint.Any, E, R, TopLevel> = group
  for (const endpoint of Object.values(group.endpoints)) {
    if (HttpApiEndpoint.isHttpApiEndpoint(endpoint) && Option.isSome(endpoint.payloadSchema)) {
      // `add` replaces the endpoint of the same name.
      const payload = Schema.make(endpoint.payloadSchema.value.ast).annotations({ parseOptions: { onExcessProperty: "error" } })
      strict = strict.add(endpoint.setPayload(payload))
    }
  }
  // Every endpoint is itself again, its payload only annotated: the group's types still hold.
  return strict as HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>
}

/**
 * The reference's introduction: what the API is, and the three shapes its errors take (the same
 * words as the README's; Docs.test.ts checks both against real answers).
 */
const description = `Team AI workspace: organizations, credits, memories, workspaces with connected code repositories, huddles and an OpenAI-compatible endpoint.

**Errors.** Every error is answered with its HTTP status and the envelope \`{"error":"UNAUTHORIZED","message":"Missing bearer credentials"}\` (\`error\` is a CODE such as \`INVALID_REQUEST\`, \`NOT_FOUND\`, \`INSUFFICIENT_CREDITS\`, \`RATE_LIMITED\`, \`INTERNAL\`), with three exceptions that speak their clients' dialect:

- the OpenAI-compatible endpoints (\`/v1/chat/completions\`, \`/v1/responses\`, \`/v1/embeddings\`, \`/v1/models\`) answer in OpenAI's envelope, \`{"error":{"message":"Missing bearer credentials","type":"authentication_error","param":null,"code":"UNAUTHORIZED"}}\` — \`code\` holds the same CODE — so that OpenAI SDKs raise their own error classes;
- Anthropic's Messages API (\`/v1/messages\`, \`/v1/messages/count_tokens\`) answers in Anthropic's envelope, \`{"type":"error","error":{"type":"authentication_error","message":"Missing bearer credentials"}}\`, so that Anthropic's SDKs and Claude Code raise their own error classes;
- \`POST /v1/rpc\` answers with JSON-RPC 2.0 error objects, \`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"error":"NOT_FOUND","message":"No method \\"nope\\"; rpc.discover lists them"}},"id":1}\` — \`data\` is the envelope — except for failures before any call runs (401, 413, 429), which are the plain envelope.

A \`500 INTERNAL\` message gives the request id to quote (also in \`X-Request-Id\`); a \`503 SERVICE_UNAVAILABLE\` comes with \`Retry-After\`.`

const contract = HttpApi.make("huddle")
  .add(HealthApi)
  .add(refuseUnknownFields(AuthApi).prefix("/v1"))
  .add(refuseUnknownFields(MeApi).prefix("/v1"))
  .add(refuseUnknownFields(ApiKeysApi).prefix("/v1"))
  .add(refuseUnknownFields(OrgsApi).prefix("/v1"))
  .add(refuseUnknownFields(OrgAdminApi).prefix("/v1"))
  .add(refuseUnknownFields(MemoriesApi).prefix("/v1"))
  .add(refuseUnknownFields(WorkspacesApi).prefix("/v1"))
  .add(refuseUnknownFields(HuddleApi).prefix("/v1"))
  // The body is JSON-RPC's, read by the handler; the methods refuse unknown params (rpc/JsonRpc.ts).
  .add(RpcApi.prefix("/v1"))
  // Its request schema lists every parameter of OpenAI's and refuses other top-level fields itself
  // (nested objects of OpenAI's stay lenient: see openai/OpenAiApi.ts).
  .add(OpenAiApi.prefix("/v1"))
  .add(refuseUnknownFields(ResponsesApi).prefix("/v1"))
  // Its request schemas refuse unknown top-level fields and keep nested ones as sent, for an
  // Anthropic upstream (see anthropic/MessagesWire.ts).
  .add(MessagesApi.prefix("/v1"))
  .add(refuseUnknownFields(EmbeddingsApi).prefix("/v1"))
  .add(refuseUnknownFields(OperatorApi).prefix("/v1"))
  // Errors any endpoint can answer with, raised at the edge.
  .addError(Envelope.InvalidRequest)
  .addError(Envelope.Unauthorized)
  .addError(Envelope.NotFound)
  .addError(Envelope.PayloadTooLarge)
  .addError(Envelope.Internal)
  .addError(Envelope.ServiceUnavailable)
  .annotate(OpenApi.Title, "Huddle API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, description)
  .annotate(OpenApi.Servers, OpenApiDocument.servers)
  .annotate(HttpApi.AdditionalSchemas, OpenApiDocument.additionalSchemas)

/** The contract, with the fixes of its OpenAPI document that annotations cannot express. */
export class Api extends contract.annotate(OpenApi.Transform, OpenApiDocument.transform(contract)) {}
