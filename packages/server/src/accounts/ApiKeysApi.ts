import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ApiKey, ApiKeyName, CreatedApiKey } from "@huddle/domain/identity/ApiKey"
import { Id } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { ListParams, page } from "../shared/Lists.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

export const CreateApiKeyRequest = Schema.Struct({
  name: ApiKeyName,
  org_id: Schema.optionalWith(Schema.NullOr(Id), { default: () => null })
})

export const ApiKeyPage = page(ApiKey)

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/api-keys")
      .annotate(OpenApi.Summary, "Create an API key")
      .annotateContext(Idempotency.keyed)
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(Envelope.NotFound)
      .annotate(OpenApi.Description, "Create an API key (web session only). The secret `key` is shown only in this response.")
  )
  .add(
    HttpApiEndpoint.get("list", "/api-keys")
      .annotate(OpenApi.Summary, "List API keys")
      .setUrlParams(ListParams)
      .addSuccess(ApiKeyPage)
      .annotate(OpenApi.Description, "The caller's active API keys, newest first, without their secrets (web session only).")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/api-keys/:id")
      .annotate(OpenApi.Summary, "Revoke an API key")
      .setPath(Schema.Struct({ id: Id }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.NotFound)
      .annotate(OpenApi.Description, "Revoke an API key; it is refused from the next request on (web session only).")
  )
  .addError(Envelope.SessionRequired)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "API keys")
  .annotate(OpenApi.Description, "API keys for programmatic access, managed from a web session.")
{}
