export * as Body from "./Body.js"
export * as NodeCrypto from "./NodeCrypto.js"
export * as NodeHttp from "./NodeHttp.js"
export * as ScryptHasher from "./ScryptHasher.js"
