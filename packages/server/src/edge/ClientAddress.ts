/**
 * The address a request came from, for the sign-in throttles (decision 0040). The socket's peer,
 * unless the operator says how many proxies in front of Huddle append to `X-Forwarded-For`
 * (`HUDDLE_TRUST_PROXY`): then the entry that many hops from the right, the one the nearest
 * trusted proxy saw. Entries further left are written by the client and never trusted.
 */
import { isIPv6 } from "node:net"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Option } from "effect"

/** The first four groups of an IPv6 address: one host usually holds a whole /64. */
const ipv6Prefix = (address: string): string => {
  const [head = "", tail = ""] = address.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = address.includes("::") ? (tail === "" ? [] : tail.split(":")) : []
  const groups = address.includes("::")
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
    : left
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "").toLowerCase()).join(":")}::/64`
}

/** An address as the throttles count it: IPv4 (IPv4-mapped IPv6 too) as is, IPv6 by its /64. */
export const normalize = (address: string): string => {
  const bare = address.trim().replace(/^\[(.*)\](:\d+)?$/, "$1").replace(/%.*$/, "")
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped) return mapped[1]!
  return isIPv6(bare) ? ipv6Prefix(bare) : bare
}

/** The client's address, `trustedProxies` hops back through `X-Forwarded-For`; "unknown" without a socket address. */
export const of = (request: HttpServerRequest.HttpServerRequest, trustedProxies: number): string => {
  const peer = Option.getOrElse(request.remoteAddress, () => "unknown")
  if (trustedProxies <= 0) return normalize(peer)
  const forwarded = (request.headers["x-forwarded-for"] ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  // The peer is the last hop; each trusted proxy appended the address it saw.
  const chain = [...forwarded, peer]
  return normalize(chain[Math.max(0, chain.length - 1 - trustedProxies)]!)
}
