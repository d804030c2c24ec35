export * as Fixtures from "./Fixtures.js"
export { storageContract } from "./StorageContract.js"
