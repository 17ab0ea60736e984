/**
 * Every SQL-backed port of the domain, over whichever `SqlClient` is provided.
 */
import { Layer } from "effect"
import * as SqlApiKeyRepository from "./repositories/SqlApiKeyRepository.js"
import * as SqlAuditLog from "./repositories/SqlAuditLog.js"
import * as SqlHuddleRepository from "./repositories/SqlHuddleRepository.js"
import * as SqlIntentRepository from "./repositories/SqlIntentRepository.js"
import * as SqlOrganizationRepository from "./repositories/SqlOrganizationRepository.js"
import * as SqlOrgSettingsRepository from "./repositories/SqlOrgSettingsRepository.js"
import * as SqlCreditStore from "./repositories/SqlCreditStore.js"
import * as SqlMembershipRepository from "./repositories/SqlMembershipRepository.js"
import * as SqlMemoryRepository from "./repositories/SqlMemoryRepository.js"
import * as SqlPreferenceRepository from "./repositories/SqlPreferenceRepository.js"
import * as SqlTransactor from "./repositories/SqlTransactor.js"
import * as SqlUserRepository from "./repositories/SqlUserRepository.js"
import * as SqlWebSessionRepository from "./repositories/SqlWebSessionRepository.js"
import * as SqlWorkspaceRepository from "./repositories/SqlWorkspaceRepository.js"

export const layer = Layer.mergeAll(
  SqlUserRepository.layer,
  SqlWebSessionRepository.layer,
  SqlApiKeyRepository.layer,
  SqlMembershipRepository.layer,
  SqlPreferenceRepository.layer,
  SqlWorkspaceRepository.layer,
  SqlMemoryRepository.layer,
  SqlCreditStore.layer,
  SqlTransactor.layer,
  SqlOrganizationRepository.layer,
  SqlOrgSettingsRepository.layer,
  SqlAuditLog.layer,
  SqlIntentRepository.layer,
  SqlHuddleRepository.layer
)
