export { auditContract } from "./AuditContract.js"
export * as Fixtures from "./Fixtures.js"
export { type SignInCounts, type SignInRequest, signInCounts, signInRequests } from "./SignInFlow.js"
export { storageContract } from "./StorageContract.js"
