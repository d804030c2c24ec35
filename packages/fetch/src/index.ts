export * as Fetch from "./Fetch.js"
