/**
 * Time as the protocol counts it: whole epoch seconds, read from Effect's Clock
 * service (so tests drive it with the test clock).
 */
export { nowSeconds } from "./internal/time.js"
