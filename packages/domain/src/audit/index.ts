/** The audit log of everything that changes an org. */
export * as Audit from "./Audit.js"
export * as AuditLog from "./AuditLog.js"
