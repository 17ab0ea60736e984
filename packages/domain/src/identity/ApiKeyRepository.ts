import { Context, type DateTime, type Effect, type Option } from "effect"
import type { ApiKey } from "./ApiKey.js"
import type { PageRequest } from "../shared/Page.js"
import type { User } from "./User.js"

export interface NewApiKey {
  readonly key: ApiKey
  readonly userId: string
  readonly tokenHash: string
}

export interface ActiveApiKey {
  readonly id: string
  readonly user: User
  readonly orgId: string | null
  readonly tokenHash: string
}

export interface Service {
  readonly create: (key: NewApiKey) => Effect.Effect<void>
  /** The owner's keys that are not revoked, newest first, up to `limit + 1` of them. */
  readonly listForUser: (userId: string, page: PageRequest) => Effect.Effect<ReadonlyArray<ApiKey>>
  readonly findActive: (prefix: string) => Effect.Effect<Option.Option<ActiveApiKey>>
  /** Revokes an unrevoked key of this owner; none when there is no such key. */
  readonly revoke: (userId: string, id: string, at: DateTime.Utc) => Effect.Effect<Option.Option<ApiKey>>
  /** Revokes every unrevoked key of the user; returns the keys revoked. */
  readonly revokeAll: (userId: string, at: DateTime.Utc) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Revokes the user's unrevoked keys bound to the org; returns the keys revoked. */
  readonly revokeBoundTo: (userId: string, orgId: string, at: DateTime.Utc) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Records use; implementations may coarsen it to spare writes on the hot path. */
  readonly touch: (id: string, at: DateTime.Utc) => Effect.Effect<void>
}

export class ApiKeyRepository extends Context.Tag("@huddle/domain/ApiKeyRepository")<ApiKeyRepository, Service>() {}
