/**
 * @huddle/adapters: storage (PostgreSQL and embedded PGlite), cryptography and ids for the
 * ports of `@huddle/domain`.
 */
export * as NodeSecretTokens from "./crypto/NodeSecretTokens.js"
export * as ScryptPasswordHasher from "./crypto/ScryptPasswordHasher.js"
export * as Database from "./sql/Database.js"
export * as Migrations from "./sql/Migrations.js"
export * as PgliteClient from "./sql/PgliteClient.js"
export * as PostgresClient from "./sql/PostgresClient.js"
export * as Storage from "./Storage.js"
export * as UlidIds from "./UlidIds.js"
