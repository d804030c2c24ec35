/**
 * Time as the protocol counts it: whole epoch seconds, read from Effect's Clock
 * service (so tests drive it with the test clock). `nowSeconds` rounds down and is
 * what expiry is checked against (`expiresAt <= nowSeconds` is expired); `issueTime`
 * gives an issue instant both ways: `issuedAt` rounded down (the `iat` a token reports,
 * never after the instant) and `startsAt` rounded up, what lifetimes start from
 * (`expiry(time, ttl) = startsAt + ttl`); `issueSeconds` is that `startsAt` alone.
 *
 * @public
 */
export { expiry, type IssueTime, issueSeconds, issueTime, nowSeconds } from "./internal/time.js"
