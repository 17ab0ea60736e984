/**
 * Whether a git URL's host is public (connecting a repository must not reach the
 * server's own network): its addresses, each judged by IANA's special-purpose registries, and the
 * settings that pin git to the addresses checked.
 */
import { promises as dns } from "node:dns"
import { BlockList, isIP } from "node:net"
import { Forbidden } from "@huddle/domain/shared/Errors"
import { Effect } from "effect"

const privateVariable = "HUDDLE_REPO_GIT_PRIVATE_HOSTS"

/**
 * Addresses of the server's own networks (IANA's special-purpose registries: this host, loopback,
 * private, shared, link-local, multicast, reserved). The documentation ranges are not among them:
 * they reach nothing of the server's, and a proxy may answer from one.
 */
const notPublic = new BlockList()
for (const [address, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) notPublic.addSubnet(address, prefix, "ipv4")
for (const [address, prefix] of [
  ["::", 128], ["::1", 128], ["64:ff9b:1::", 48], ["100::", 64], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]
] as const) notPublic.addSubnet(address, prefix, "ipv6")

/** An IPv6 address's eight groups, as numbers (the URL parser writes every form the same way first). */
const groupsOf = (address: string): Array<number> => {
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1)
  const [head, tail] = canonical.includes("::") ? canonical.split("::") as [string, string] : [canonical, undefined]
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  return [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right].map((group) => Number.parseInt(group, 16))
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`

/**
 * The IPv4 address an IPv6 one stands for, when it embeds one: IPv4-mapped (`::ffff:a.b.c.d`),
 * NAT64's well-known prefix (`64:ff9b::/96`, what DNS64 answers for an IPv4-only host) and 6to4
 * (`2002::/16`).
 */
const embeddedIPv4 = (address: string): string | undefined => {
  const g = groupsOf(address)
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return ipv4Of(g[6]!, g[7]!)
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!)
  return undefined
}

/** Whether `address` (an IP address) is public; an IPv6 address embedding an IPv4 one is judged by it. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6) {
    const ipv4 = embeddedIPv4(address)
    if (ipv4 !== undefined) return isPublicAddress(ipv4)
  }
  return !notPublic.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** The host (without brackets) and port git would connect to for `url`; none for `file:`. */
const endpointOf = (url: string, scheme: string): { readonly host: string; readonly port: number } | undefined => {
  if (scheme === "file") return undefined
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) {
    const parsed = new URL(url)
    const port = parsed.port === "" ? ({ https: 443, http: 80, ssh: 22, git: 9418 } as Record<string, number>)[scheme] ?? 0 : Number(parsed.port)
    return { host: parsed.hostname.replace(/^\[|\]$/g, ""), port }
  }
  // scp-like: `[user@]host:path`, or with the host in brackets, `[user@]\[host\]:path` and `\[user@host\]:path`.
  const bracketed = /^(?:[^@/[]*@)?\[([^\]]*)\]:/.exec(url)
  if (bracketed !== null) return { host: bracketed[1]!.slice(bracketed[1]!.lastIndexOf("@") + 1), port: 22 }
  const scp = /^([^/:]+):/.exec(url)
  return scp === null ? undefined : { host: scp[1]!.slice(scp[1]!.lastIndexOf("@") + 1), port: 22 }
}

/** Names that resolve to this machine wherever they are looked up (curl answers `*.localhost` itself). */
const isLocalName = (host: string) => /(^|\.)localhost$/i.test(host.replace(/\.$/, ""))

/**
 * The addresses `url`'s host resolves to, all public (none to check for `file:`, nor when the
 * operator allows private hosts), as the git settings that pin them; a host that does not resolve
 * here is refused, since nothing could be checked.
 */
export const publicHost = (url: string, scheme: string, privateHosts: boolean): Effect.Effect<{ readonly pin: ReadonlyArray<string> }, Forbidden> =>
  Effect.gen(function*() {
    const endpoint = endpointOf(url, scheme)
    if (endpoint === undefined || privateHosts) return { pin: [] }
    const refused = new Forbidden({
      message: `git_url must name a public host: ${endpoint.host} is, or resolves to, a loopback, private or link-local address (the operator can allow them: ${privateVariable})`
    })
    if (endpoint.host === "" || isLocalName(endpoint.host)) return yield* refused
    const addresses = isIP(endpoint.host) !== 0
      ? [endpoint.host]
      : yield* Effect.promise(() => dns.lookup(endpoint.host, { all: true, verbatim: true }).then((all) => all.map((a) => a.address), () => []))
    // A name this process cannot resolve might still resolve for git (another resolver, or
    // curl's own rules): nothing checked, nothing connected to.
    if (addresses.length === 0) {
      return yield* new Forbidden({ message: `git_url's host ${endpoint.host} does not resolve here, so it cannot be checked to be public` })
    }
    if (addresses.some((address) => !isPublicAddress(address))) {
      return yield* refused
    }
    // Over HTTP(S), git connects to these addresses and no others (libcurl's resolve list).
    const pinned = isIP(endpoint.host) === 0 && (scheme === "https" || scheme === "http")
    return { pin: pinned ? ["-c", `http.curloptResolve=${endpoint.host}:${endpoint.port}:${addresses.map((a) => isIP(a) === 6 ? `[${a}]` : a).join(",")}`] : [] }
  })
