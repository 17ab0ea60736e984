/**
 * @huddle/testkit: the real Huddle server and fresh databases for tests, ours and those of
 * services that embed or call Huddle; in-memory ports and scripted models for domain tests.
 */
export * as Accounts from "./Accounts.js"
export * as CreditsHarness from "./CreditsHarness.js"
export * as Operator from "./Operator.js"
export * as FakeAnthropic from "./FakeAnthropic.js"
export * as FakeOpenAi from "./FakeOpenAi.js"
export * as FakeUpstream from "./FakeUpstream.js"
export * as Orgs from "./Orgs.js"
export * as TestDatabase from "./TestDatabase.js"
export * as TestServer from "./TestServer.js"
export * as SseClient from "./SseClient.js"
export * as WithFakeUpstream from "./WithFakeUpstream.js"
export * as InMemoryCreditStore from "./ports/InMemoryCreditStore.js"
export * as InMemoryDomain from "./ports/InMemoryDomain.js"
export * as InMemoryIntents from "./ports/InMemoryIntents.js"
export * as InMemoryMemberships from "./ports/InMemoryMemberships.js"
export * as InMemoryMemories from "./ports/InMemoryMemories.js"
export * as InMemoryPorts from "./ports/InMemoryPorts.js"
export * as ScriptedModels from "./ports/ScriptedModels.js"
export * as DirectoryIndexer from "./ports/DirectoryIndexer.js"
export * as InMemoryRepositoryStore from "./ports/InMemoryRepositoryStore.js"
