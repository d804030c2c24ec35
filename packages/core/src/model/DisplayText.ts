/**
 * Texts an administrator gives that pages show (an application's name, a username): the
 * characters that would make them read differently from what they hold are refused when given
 * and dropped when shown (docs/security.md T18). Control characters are `Params.isPlainText`'s.
 */

// Unicode general category Cf (bidirectional controls U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069; invisible U+00AD, U+180E, U+200B-U+200D, U+2060-U+2064, U+FEFF; tags), the line
// and paragraph separators (Zl, Zp), and the Hangul fillers that draw nothing.
/**
 * Whether `s` is plain text, the one rule every text passes before a store is asked about it
 * (docs/security.md T13): no control character (C0, DEL, C1) and no lone surrogate, which no
 * store keeps as sent (PostgreSQL refuses NUL, and UTF-8 has no lone surrogates).
 */
export const isPlainText = (s: string): boolean => !/[\p{Cc}\p{Cs}]/u.test(s)

const hidden = "[\\p{Cf}\\p{Zl}\\p{Zp}\\u115F\\u1160\\u3164\\uFFA0]"
const anyHidden = new RegExp(hidden, "u")
const everyHidden = new RegExp(hidden, "gu")

/** Whether `s` holds no bidirectional control, invisible format character, separator or filler. */
export const isDisplayText = (s: string): boolean => !anyHidden.test(s)

/** `s` without the characters `isDisplayText` refuses, as pages show a text stored before the rule. */
export const forDisplay = (s: string): string => (anyHidden.test(s) ? s.replace(everyHidden, "") : s)

/** Why a value of `field` is refused by `isDisplayText`, without the value. */
export const problem = (field: string): string =>
  `${field} must not contain bidirectional or invisible formatting characters`
