/**
 * Time as the protocol counts it: whole epoch seconds, read from Effect's Clock
 * service (so tests drive it with the test clock). `nowSeconds` rounds down and is
 * what expiry is checked against (`expiresAt <= nowSeconds` is expired); `issueSeconds`
 * rounds up and is what lifetimes start from (`expiresAt = issueSeconds + ttl`).
 *
 * @public
 */
export { issueSeconds, nowSeconds } from "./internal/time.js"
