export * as PgliteClient from "./PgliteClient.js"
export * as PostgresStorage from "./PostgresStorage.js"
