/**
 * Every SQL-backed port of the domain, over whichever `SqlClient` (and `ChangeFeed`) is provided.
 * The rows read on every request (authentication, membership, settings, workspaces, memories)
 * go through per-instance caches that the change feed invalidates.
 */
import { Layer } from "effect"
import * as CachedApiKeys from "./cache/CachedApiKeys.js"
import * as CachedMemberships from "./cache/CachedMemberships.js"
import * as CachedMemories from "./cache/CachedMemories.js"
import * as CachedOrgSettings from "./cache/CachedOrgSettings.js"
import * as CachedPreferences from "./cache/CachedPreferences.js"
import * as CachedWorkspaces from "./cache/CachedWorkspaces.js"
import * as InvalidatingOrganizations from "./cache/InvalidatingOrganizations.js"
import * as SqlRepositoryStore from "./grounding/SqlRepositoryStore.js"
import * as SqlApiKeyRepository from "./repositories/SqlApiKeyRepository.js"
import * as SqlAuditLog from "./repositories/SqlAuditLog.js"
import * as SqlHuddleRepository from "./repositories/SqlHuddleRepository.js"
import * as SqlInstances from "./repositories/SqlInstances.js"
import * as SqlIntentRepository from "./repositories/SqlIntentRepository.js"
import * as SqlOrganizationRepository from "./repositories/SqlOrganizationRepository.js"
import * as SqlOrgSettingsRepository from "./repositories/SqlOrgSettingsRepository.js"
import * as LeasedCreditStore from "./credits/LeasedCreditStore.js"
import * as SqlMembershipRepository from "./repositories/SqlMembershipRepository.js"
import * as SqlMemoryRepository from "./repositories/SqlMemoryRepository.js"
import * as SqlPasswordResetRepository from "./repositories/SqlPasswordResetRepository.js"
import * as SqlPreferenceRepository from "./repositories/SqlPreferenceRepository.js"
import * as SqlSpendRepository from "./spend/SqlSpendRepository.js"
import * as SqlTransactor from "./repositories/SqlTransactor.js"
import * as SqlUserRepository from "./repositories/SqlUserRepository.js"
import * as SqlWebSessionRepository from "./repositories/SqlWebSessionRepository.js"
import * as SqlWorkspaceRepository from "./repositories/SqlWorkspaceRepository.js"

export const layer = Layer.mergeAll(
  SqlUserRepository.layer,
  SqlWebSessionRepository.layer,
  SqlPasswordResetRepository.layer,
  Layer.provide(CachedApiKeys.layer, SqlApiKeyRepository.layer),
  Layer.provide(CachedMemberships.layer, SqlMembershipRepository.layer),
  Layer.provide(CachedPreferences.layer, SqlPreferenceRepository.layer),
  Layer.provide(CachedWorkspaces.layer, SqlWorkspaceRepository.layer),
  Layer.provide(CachedMemories.layer, SqlMemoryRepository.layer),
  LeasedCreditStore.layer,
  SqlSpendRepository.layer,
  SqlTransactor.layer,
  Layer.provide(InvalidatingOrganizations.layer, SqlOrganizationRepository.layer),
  Layer.provide(CachedOrgSettings.layer, SqlOrgSettingsRepository.layer),
  SqlAuditLog.layer,
  SqlIntentRepository.layer,
  SqlHuddleRepository.layer,
  SqlRepositoryStore.layer
).pipe(Layer.provideMerge(SqlInstances.layer))
