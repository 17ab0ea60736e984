/**
 * The HTTP contract for clients: `@huddle/server/contract`. A console (or any client) builds a
 * typed client from it (`HttpApiClient.make(Api, { baseUrl })`) and decodes answers with the
 * same schemas the server encodes them with. It re-exports `Api.ts` and `api/` only, which import
 * nothing but `effect`, `@effect/platform` and the domain's schemas, so a browser bundle can take
 * it without pulling in Node or the server's implementation (test/ContractBundle.test.ts bundles
 * it for the browser; docs/decisions/0017-browser-contract.md).
 *
 * @example
 * import * as HttpApiClient from "@effect/platform/HttpApiClient"
 * import { Api } from "@huddle/server/contract"
 * const client = yield* HttpApiClient.make(Api, { baseUrl: "https://huddle.example" })
 * const sessions = yield* client.huddle.sessions({ urlParams: { limit: 20 } })
 */
export { Api } from "./Api.js"

// The endpoint groups, with the schemas of their requests and replies.
export { ApiKeyPage, ApiKeysApi, CreateApiKeyRequest } from "./api/ApiKeysApi.js"
export { AuthApi, LoginRequest, SignupRequest, SignupResponse } from "./api/AuthApi.js"
export { Health, HealthApi } from "./api/HealthApi.js"
export { HuddleApi, MessageRequest, RenameRequest, StartRequest, StreamParams } from "./api/HuddleApi.js"
export { MeApi } from "./api/MeApi.js"
export { CreateMemoryRequest, MemoriesApi, MemoryListParams, MemoryPage, UpdateMemoryRequest } from "./api/MemoriesApi.js"
export { OpenAiApi } from "./api/OpenAiApi.js"
export { GrantRequest, LedgerPage, LedgerParams, OperatorApi, OperatorAuthenticated } from "./api/OperatorApi.js"
export { AuditLogParams, CapRequest, InviteRequest, OrgAdminApi } from "./api/OrgAdminApi.js"
export { OrgIdPath, OrgsApi } from "./api/OrgsApi.js"
export { RpcApi } from "./api/RpcApi.js"
export { ConnectRepositoryRequest, CreateWorkspaceRequest, RepositoryFileParams, WorkspacesApi } from "./api/WorkspacesApi.js"

/** OpenAI's chat-completion and model schemas (`OpenAi.ChatCompletionRequest`, `OpenAi.Message`, …). */
export * as OpenAi from "./api/OpenAiApi.js"

// What several groups share: errors, headers, limits, lists, the middleware they declare.
export * as EdgeErrors from "./api/EdgeErrors.js"
export * as Envelope from "./api/Envelope.js"
/** The events of the streamed answers (`?stream=true`), to decode a stream with the server's schemas. */
export * as EventStreams from "./api/EventStreams.js"
export * as ErrorTable from "./api/ErrorTable.js"
export * as Headers from "./api/Headers.js"
export * as Idempotency from "./api/Idempotency.js"
export * as Input from "./api/Input.js"
/** The JSON-RPC intent methods' params and results (`intent.list`, `intent.approve`, …). */
export * as IntentMethods from "./api/IntentMethods.js"
export * as JsonRpcWire from "./api/JsonRpcWire.js"
export * as Limits from "./api/Limits.js"
export * as Lists from "./api/Lists.js"
export * as RateLimit from "./api/RateLimit.js"
export * as Security from "./api/Security.js"
