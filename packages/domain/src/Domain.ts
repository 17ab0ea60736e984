/**
 * The domain's services wired to each other, once: what remains to provide is ports (storage,
 * providers, the catalog, code search, repository sources and indexer, ids, hashing, tokens) and
 * the settings a deployment chooses (`AccountSettings`; `CouncilSettings`, `IndexJobSettings`,
 * `ReservationExpiry` and `InstanceLiveness` have defaults). The engine provides them over SQL and
 * Node (`adapters/Engine.ts`), the domain's tests in memory (`testkit/ports/InMemoryDomain.ts`).
 *
 * Each step provides the services of the steps above it; a service goes in the first step below
 * every service it takes.
 */
import { Layer } from "effect"
import * as Accounts from "./accounts/Accounts.js"
import * as Answers from "./answers/Answers.js"
import * as Completions from "./answers/Completions.js"
import * as Embeddings from "./answers/Embeddings.js"
import * as ApiKeys from "./accounts/ApiKeys.js"
import * as Authentication from "./accounts/Authentication.js"
import * as Council from "./council/Council.js"
import * as Credits from "./credits/Credits.js"
import * as ReservationExpiry from "./credits/ReservationExpiry.js"
import * as Grounding from "./grounding/Grounding.js"
import * as IndexJobs from "./grounding/IndexJobs.js"
import * as Repositories from "./grounding/Repositories.js"
import * as Huddles from "./huddle/Huddles.js"
import * as IntentExpiry from "./huddle/IntentExpiry.js"
import * as IntentPipeline from "./huddle/IntentPipeline.js"
import * as Intents from "./huddle/Intents.js"
import * as InstanceLiveness from "./instances/InstanceLiveness.js"
import * as ContextAssembly from "./memories/ContextAssembly.js"
import * as Memories from "./memories/Memories.js"
import * as MeteredCall from "./models/MeteredCall.js"
import * as Router from "./models/Router.js"
import * as Operator from "./operator/Operator.js"
import * as OrgAccess from "./orgs/OrgAccess.js"
import * as OrgCredits from "./orgs/OrgCredits.js"
import * as Organizations from "./orgs/Organizations.js"
import * as OrgSettings from "./orgs/OrgSettings.js"
import * as RequestScope from "./request/RequestScope.js"
import * as Spend from "./spend/Spend.js"
import * as Workspaces from "./workspaces/Workspaces.js"

/**
 * The answer path: a request's scope, then completions and the intent pipeline over the answer
 * core, the council, the one metered call and what they take (credits, the router, memories,
 * grounding, org settings).
 */
export const answering = Layer.mergeAll(RequestScope.layer, Completions.layer, Embeddings.layer, IntentPipeline.layer).pipe(
  Layer.provideMerge(Answers.layer),
  Layer.provideMerge(Council.layer),
  Layer.provideMerge(MeteredCall.layer),
  Layer.provideMerge(Layer.mergeAll(Router.layer, Credits.layer, ContextAssembly.layer, Grounding.layer, OrgSettings.layer)),
  Layer.provideMerge(OrgAccess.layer)
)

/** What every instance runs in the background while it lives: the sweeps of what was left held. */
export const background = Layer.mergeAll(ReservationExpiry.layer, IntentExpiry.layer, InstanceLiveness.layer)

/** Every service of the domain, with the answer path and the background work. */
export const layer = Layer.mergeAll(Intents.layer, Operator.layer, background).pipe(
  Layer.provideMerge(Layer.mergeAll(Huddles.layer, Accounts.layer, Repositories.layer)),
  Layer.provideMerge(Layer.mergeAll(
    Organizations.layer,
    OrgCredits.layer,
    ApiKeys.layer,
    Authentication.layer,
    Workspaces.layer,
    Memories.layer,
    Spend.layer,
    IndexJobs.layer
  )),
  Layer.provideMerge(answering)
)
