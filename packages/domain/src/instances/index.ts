/** The server instances sharing one database: their heartbeats, and giving back what a lost one held (reservations, running intents). */
export * as InstanceLiveness from "./InstanceLiveness.js"
export * as Instances from "./Instances.js"
