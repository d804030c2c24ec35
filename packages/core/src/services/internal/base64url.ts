const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** base64url without padding (RFC 4648 §5), in plain JavaScript for Web-standard runtimes. */
export const encode = (bytes: Uint8Array): string => {
  let out = ""
  const n = bytes.length
  let i = 0
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number)
    out += alphabet[v >> 18]! + alphabet[(v >> 12) & 63]! + alphabet[(v >> 6) & 63]! + alphabet[v & 63]!
  }
  if (i < n) {
    const v = ((bytes[i] as number) << 16) | (i + 1 < n ? (bytes[i + 1] as number) << 8 : 0)
    out += alphabet[v >> 18]! + alphabet[(v >> 12) & 63]!
    if (i + 1 < n) out += alphabet[(v >> 6) & 63]!
  }
  return out
}

// One encoder for every call: it holds no state between calls
const encoder = new TextEncoder()

/** UTF-8 bytes of a string. */
export const utf8 = (s: string): Uint8Array<ArrayBuffer> => encoder.encode(s) as Uint8Array<ArrayBuffer>
