/** Static secrets an operator sets (the operator token, the metrics token), checked against a request. */
import { createHash, timingSafeEqual } from "node:crypto"
import { Redacted } from "effect"
import { credentialOf } from "../shared/Security.js"

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest()

/**
 * Whether the `Authorization` header is `Bearer <secret>`, compared in constant time (digests of
 * equal length, whatever the length of what was sent).
 */
export const bearerMatches = (authorization: string | undefined, secret: Redacted.Redacted): boolean => {
  const sent = credentialOf(authorization)
  return sent._tag === "Bearer" && timingSafeEqual(digest(sent.token), digest(Redacted.value(secret)))
}
