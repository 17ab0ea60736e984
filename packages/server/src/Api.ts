/**
 * The HTTP contract of Huddle: every endpoint, its schemas and its errors. Clients (and the
 * OpenAPI document) derive from this; handlers live in `http/`.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { ApiKeysApi } from "./api/ApiKeysApi.js"
import { AuthApi } from "./api/AuthApi.js"
import * as Envelope from "./api/Envelope.js"
import { HealthApi } from "./api/HealthApi.js"
import { HuddleApi } from "./api/HuddleApi.js"
import { MeApi } from "./api/MeApi.js"
import { MemoriesApi } from "./api/MemoriesApi.js"
import { OpenAiApi } from "./api/OpenAiApi.js"
import { OperatorApi } from "./api/OperatorApi.js"
import { OrgAdminApi } from "./api/OrgAdminApi.js"
import { OrgsApi } from "./api/OrgsApi.js"
import { RpcApi } from "./api/RpcApi.js"

export class Api extends HttpApi.make("huddle")
  .add(HealthApi)
  .add(AuthApi.prefix("/v1"))
  .add(MeApi.prefix("/v1"))
  .add(ApiKeysApi.prefix("/v1"))
  .add(OrgsApi.prefix("/v1"))
  .add(OrgAdminApi.prefix("/v1"))
  .add(MemoriesApi.prefix("/v1"))
  .add(HuddleApi.prefix("/v1"))
  .add(RpcApi.prefix("/v1"))
  .add(OpenAiApi.prefix("/v1"))
  .add(OperatorApi.prefix("/v1"))
  // Errors any endpoint can answer with, raised at the edge.
  .addError(Envelope.InvalidRequest)
  .addError(Envelope.Unauthorized)
  .addError(Envelope.NotFound)
  .addError(Envelope.PayloadTooLarge)
  .addError(Envelope.Internal)
  .addError(Envelope.ServiceUnavailable)
  .annotate(OpenApi.Title, "Huddle API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Team AI workspace: organizations, credits, memories, huddles and an OpenAI-compatible endpoint.")
{}
