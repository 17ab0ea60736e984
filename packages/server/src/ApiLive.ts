/**
 * The contract served: every group's handlers, each built among the services its requests read
 * (edge/RequestContext.ts), and the middleware the groups name. `Api.ts` is what it serves.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import { Accounts } from "@huddle/domain/accounts/Accounts"
import { ApiKeys } from "@huddle/domain/accounts/ApiKeys"
import { Workspaces } from "@huddle/domain/workspaces/Workspaces"
import { OrgCredits } from "@huddle/domain/orgs/OrgCredits"
import { Repositories } from "@huddle/domain/grounding/Repositories"
import { Huddles } from "@huddle/domain/huddle/Huddles"
import { Intents } from "@huddle/domain/huddle/Intents"
import { Memories } from "@huddle/domain/memories/Memories"
import { Completions } from "@huddle/domain/answers/Completions"
import { Embeddings } from "@huddle/domain/answers/Embeddings"
import { Router } from "@huddle/domain/models/Router"
import { Operator } from "@huddle/domain/operator/Operator"
import { OrgSettings } from "@huddle/domain/orgs/OrgSettings"
import { Organizations } from "@huddle/domain/orgs/Organizations"
import { RequestScopes } from "@huddle/domain/request/RequestScope"
import { Spend } from "@huddle/domain/spend/Spend"
import { Layer } from "effect"
import { ApiKeysHttp } from "./accounts/ApiKeysHttp.js"
import { AuthHttp } from "./accounts/AuthHttp.js"
import { MessagesHttp } from "./anthropic/MessagesHttp.js"
import { MeHttp } from "./accounts/MeHttp.js"
import * as SignInThrottle from "./accounts/SignInThrottle.js"
import { Api } from "./Api.js"
import { isolated } from "./edge/RequestContext.js"
import { HealthHttp } from "./health/HealthHttp.js"
import { HuddleHttp } from "./huddle/HuddleHttp.js"
import { MemoriesHttp } from "./memories/MemoriesHttp.js"
import { EmbeddingsHttp } from "./openai/EmbeddingsHttp.js"
import { OpenAiHttp } from "./openai/OpenAiHttp.js"
import { ResponsesHttp } from "./openai/ResponsesHttp.js"
import { OperatorAuthenticated } from "./operator/OperatorApi.js"
import { OperatorAuthenticatedLive, OperatorHttp } from "./operator/OperatorHttp.js"
import { OrgAdminHttp } from "./orgs/OrgAdminHttp.js"
import { OrgsHttp } from "./orgs/OrgsHttp.js"
import { RpcHttp } from "./rpc/RpcHttp.js"
import type { ServerConfig } from "./ServerConfig.js"
import { AuthenticatedLive } from "./shared/AuthenticatedLive.js"
import { Idempotent } from "./shared/Idempotency.js"
import * as IdempotencyLive from "./shared/IdempotencyLive.js"
import { RateLimited } from "./shared/RateLimit.js"
import { RateLimitedLive } from "./shared/RateLimitedLive.js"
import * as RateLimiting from "./shared/RateLimiting.js"
import { Authenticated } from "./shared/Security.js"
import { WorkspacesHttp } from "./workspaces/WorkspacesHttp.js"

/** The middleware an API group's endpoints may name (their services are read as its layer is built). */
const groupMiddleware = [Authenticated, RateLimited, Idempotent] as const

export const layer = (config: Pick<ServerConfig, "trustProxy" | "operatorToken">) =>
  HttpApiBuilder.api(Api).pipe(
    // Each group built among what it reads, which is then all its requests carry (RequestContext).
    Layer.provide([
      isolated(SqlClient.SqlClient, Router)(HealthHttp),
      isolated(Accounts, SignInThrottle.SignInThrottle, ...groupMiddleware)(AuthHttp),
      isolated(Accounts, ...groupMiddleware)(MeHttp),
      isolated(ApiKeys, ...groupMiddleware)(ApiKeysHttp),
      isolated(Organizations, OrgSettings, OrgCredits, ...groupMiddleware)(OrgsHttp),
      isolated(Organizations, OrgSettings, OrgCredits, Spend, ...groupMiddleware)(OrgAdminHttp),
      isolated(Memories, ...groupMiddleware)(MemoriesHttp),
      isolated(Repositories, Workspaces, ...groupMiddleware)(WorkspacesHttp),
      isolated(Huddles, RequestScopes, ...groupMiddleware)(HuddleHttp),
      isolated(Intents, RequestScopes, RateLimiting.RateLimits, ...groupMiddleware)(RpcHttp),
      isolated(Completions, RequestScopes, ...groupMiddleware)(OpenAiHttp),
      isolated(Completions, RequestScopes, ...groupMiddleware)(ResponsesHttp),
      isolated(Completions, RequestScopes, ...groupMiddleware)(MessagesHttp),
      isolated(Embeddings, RequestScopes, ...groupMiddleware)(EmbeddingsHttp),
      isolated(Operator, Spend, OperatorAuthenticated)(OperatorHttp)
    ]),
    Layer.provide([
      SignInThrottle.layer({ trustedProxies: config.trustProxy ?? 0 }),
      AuthenticatedLive,
      RateLimitedLive,
      IdempotencyLive.IdempotentLive(),
      OperatorAuthenticatedLive(config.operatorToken)
    ])
  )
