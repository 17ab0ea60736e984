/** Scoped memories and the context assembly that puts them in front of every model call. */
export * as ContextAssembly from "./ContextAssembly.js"
export * as Memories from "./Memories.js"
export * as Memory from "./Memory.js"
export * as MemoryRepository from "./MemoryRepository.js"
