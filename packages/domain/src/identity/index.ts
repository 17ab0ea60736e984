/** Who calls: users, the principal a request is made by (a user and the credential they came with), API keys and their store. */
export * as ApiKey from "./ApiKey.js"
export * as ApiKeyRepository from "./ApiKeyRepository.js"
export * as Principal from "./Principal.js"
export * as User from "./User.js"
