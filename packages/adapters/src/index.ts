/**
 * @huddle/adapters: storage (PostgreSQL and embedded PGlite), cryptography, ids and model
 * providers for the ports of `@huddle/domain`.
 */
export * as ChangeFeed from "./cache/ChangeFeed.js"
export * as PgliteChangeFeed from "./cache/PgliteChangeFeed.js"
export * as PostgresChangeFeed from "./cache/PostgresChangeFeed.js"
export * as AnthropicProvider from "./models/AnthropicProvider.js"
export * as Catalog from "./models/Catalog.js"
export * as OfflineProvider from "./models/OfflineProvider.js"
export * as OpenAiCompatibleProvider from "./models/OpenAiCompatibleProvider.js"
export * as Providers from "./models/Providers.js"
export * as AnswerSealing from "./crypto/AnswerSealing.js"
export * as NodeSecretTokens from "./crypto/NodeSecretTokens.js"
export * as ScryptPasswordHasher from "./crypto/ScryptPasswordHasher.js"
export * as Database from "./sql/Database.js"
export * as Engine from "./Engine.js"
export * as Migrations from "./sql/Migrations.js"
export * as PgliteClient from "./sql/PgliteClient.js"
export * as PostgresClient from "./sql/PostgresClient.js"
export * as Storage from "./Storage.js"
export * as UlidIds from "./UlidIds.js"
export * as NodeRepositorySources from "./grounding/NodeRepositorySources.js"
export * as SqlRepositoryStore from "./grounding/SqlRepositoryStore.js"
