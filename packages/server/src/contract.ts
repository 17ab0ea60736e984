/**
 * The HTTP contract for clients: `@huddle/server/contract`. A console (or any client) builds a
 * typed client from it (`HttpApiClient.make(Api, { baseUrl })`) and decodes answers with the
 * same schemas the server encodes them with. It re-exports `Api.ts`, each capability's `…Api.ts`
 * and the schemas of `shared/` only, which import nothing but `effect`, `@effect/platform` and the
 * domain's schemas, so a browser bundle can take it without pulling in Node or the server's
 * implementation (test/ContractImports.test.ts follows its imports, test/ContractBundle.test.ts
 * bundles it for the browser; docs/decisions/0017-browser-contract.md).
 *
 * @example
 * import * as HttpApiClient from "@effect/platform/HttpApiClient"
 * import { Api } from "@huddle/server/contract"
 * const client = yield* HttpApiClient.make(Api, { baseUrl: "https://huddle.example" })
 * const sessions = yield* client.huddle.sessions({ urlParams: { limit: 20 } })
 */
export { Api } from "./Api.js"

// The endpoint groups, with the schemas of their requests and replies.
export { ApiKeyPage, ApiKeysApi, CreateApiKeyRequest } from "./accounts/ApiKeysApi.js"
export { AuthApi, LoginRequest, SignupRequest, SignupResponse } from "./accounts/AuthApi.js"
export { Health, HealthApi } from "./health/HealthApi.js"
export { HuddleApi, MessageRequest, RenameRequest, StartRequest, StreamParams } from "./huddle/HuddleApi.js"
export { MeApi } from "./accounts/MeApi.js"
export { CreateMemoryRequest, MemoriesApi, MemoryListParams, MemoryPage, UpdateMemoryRequest } from "./memories/MemoriesApi.js"
export { OpenAiApi } from "./openai/OpenAiApi.js"
export { GrantRequest, LedgerPage, LedgerParams, OperatorApi, OperatorAuthenticated } from "./operator/OperatorApi.js"
export { AuditLogParams, CapRequest, InviteRequest, OrgAdminApi } from "./orgs/OrgAdminApi.js"
export { OrgIdPath, OrgsApi } from "./orgs/OrgsApi.js"
export { RpcApi } from "./rpc/RpcApi.js"
export { ConnectRepositoryRequest, CreateWorkspaceRequest, RepositoryFileParams, WorkspacesApi } from "./workspaces/WorkspacesApi.js"

/** OpenAI's chat-completion and model schemas (`OpenAi.ChatCompletionRequest`, `OpenAi.Message`, …). */
export * as OpenAi from "./openai/OpenAiApi.js"

// What several groups share: errors, headers, limits, lists, the middleware they declare.
export * as EdgeErrors from "./shared/EdgeErrors.js"
export * as Envelope from "./shared/Envelope.js"
/** The events of the streamed answers (`?stream=true`), to decode a stream with the server's schemas. */
export * as EventStreams from "./EventStreams.js"
export * as ErrorTable from "./shared/ErrorTable.js"
export * as Headers from "./shared/Headers.js"
export * as Idempotency from "./shared/Idempotency.js"
export * as Input from "./shared/Input.js"
/** The JSON-RPC intent methods' params and results (`intent.list`, `intent.approve`, …). */
export * as IntentMethods from "./rpc/IntentMethods.js"
export * as JsonRpcWire from "./rpc/JsonRpcWire.js"
export * as Limits from "./shared/Limits.js"
export * as Lists from "./shared/Lists.js"
export * as RateLimit from "./shared/RateLimit.js"
export * as Security from "./shared/Security.js"
