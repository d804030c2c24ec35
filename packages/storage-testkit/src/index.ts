export { auditContract } from "./AuditContract.js"
export * as Fixtures from "./Fixtures.js"
export { storageContract } from "./StorageContract.js"
