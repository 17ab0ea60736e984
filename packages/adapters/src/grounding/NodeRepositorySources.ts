/**
 * Repository sources on this machine, under the operator's rules (docs/operations.md):
 *
 * - a local path must resolve, as a real path (symlinks followed, `..` applied), to a directory
 *   inside one of `HUDDLE_REPO_ROOTS` (real paths too); with no roots, every path is refused. A
 *   path outside the roots is refused before the file system is asked anything about it, so the
 *   answer never tells whether it exists. It is checked again before every index run;
 * - a git URL must use a scheme the operator allows (`HUDDLE_REPO_GIT_SCHEMES`), with nothing
 *   git could read as an option or a transport helper (`-…`, `ext::…`); it is cloned shallow
 *   into `<repo dir>/<workspace id>/<repository id>` by `git` run with an argument array (no
 *   shell), no terminal prompts, a timeout, only the allowed protocols (submodules and
 *   redirects included), and symlinks checked out as plain files, so nothing in a clone points
 *   outside it. Every index run fetches it anew.
 * - a `file:` git URL is a local path under the same rules (roots, `..`, symlinks), and so is
 *   every place git would read through the repository it names (`.git` file, common directory,
 *   alternates, symlinks); git is given the checked git directory, never the URL as written.
 * - a git URL's host must be public: a name or address that is (or resolves to) loopback,
 *   private, link-local or otherwise not on the internet is refused, unless the operator allows
 *   them (`HUDDLE_REPO_GIT_PRIVATE_HOSTS=on`), so that connecting a repository cannot reach the
 *   server's own network. Checked on connect and before every clone or fetch; over HTTP(S) git is
 *   pinned to the addresses checked, so a name cannot resolve elsewhere in between, and follows
 *   no redirect. A name that does not resolve here, or a `localhost` one, is refused too.
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { promises as dns } from "node:dns"
import { promises as fs } from "node:fs"
import { BlockList, isIP } from "node:net"
import * as path from "node:path"
import { maskUrl, type RepositoryConnection } from "@huddle/domain/grounding/RepositoryConnection"
import { IndexFailed } from "@huddle/domain/grounding/RepositoryIndexer"
import { RepositorySources } from "@huddle/domain/grounding/RepositorySources"
import { Forbidden, InvalidRequest } from "@huddle/domain/shared/Errors"
import { Duration, Effect, Layer } from "effect"

/** The git protocols an operator may allow (git's own names; `ext` runs commands and never is). */
export const gitSchemes = ["https", "http", "ssh", "git", "file"] as const
export type GitScheme = typeof gitSchemes[number]

export interface Options {
  /** Directories under which local paths may be connected (`HUDDLE_REPO_ROOTS`); none: no local path. */
  readonly roots: ReadonlyArray<string>
  /** Schemes git URLs may use (`HUDDLE_REPO_GIT_SCHEMES`; default `https`). */
  readonly gitSchemes?: ReadonlyArray<GitScheme> | undefined
  /** Where clones live (`HUDDLE_REPO_DIR`, default `<HUDDLE_DATA_DIR>/repos`). */
  readonly cloneDir: string
  /** The longest a clone or fetch may take (`HUDDLE_REPO_GIT_TIMEOUT`, default 2 minutes). */
  readonly gitTimeout?: Duration.Duration | undefined
  /** Whether git URLs may name hosts that are not public (`HUDDLE_REPO_GIT_PRIVATE_HOSTS=on`); default: they are refused. */
  readonly privateHosts?: boolean | undefined
}

export const defaultGitTimeout = Duration.minutes(2)

const rootsVariable = "HUDDLE_REPO_ROOTS"
const schemesVariable = "HUDDLE_REPO_GIT_SCHEMES"
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

/** The URL with its scheme in lower case, as git expects it (`HTTPS://` is not a transport git knows). */
const withLowerScheme = (url: string) => url.replace(/^([A-Za-z][A-Za-z0-9+.-]*):\/\//, (scheme) => scheme.toLowerCase())

const invalid = (message: string, field: "path" | "git_url") => new InvalidRequest({ message, field })

/** Whether `child` is `parent` or inside it (both absolute and normalised). */
export const isInside = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!path.isAbsolute(relative) && relative.split(path.sep)[0] !== "..")
}

/** The scheme git would use for `url` (`ssh` for scp-like `user@host:path`), or why it is refused. */
export const gitUrlScheme = (url: string): { readonly scheme: string } | { readonly refused: string } => {
  if (url.length === 0) return { refused: "git_url must not be empty" }
  if (/\s/.test(url)) return { refused: "git_url must not contain white space" }
  if (url.startsWith("-")) return { refused: "git_url must not start with \"-\"" }
  // git's `<transport>::<address>` runs a remote helper (`ext::` runs any command).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url)) return { refused: "git_url must not name a transport helper (\"<transport>::<address>\")" }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)
  if (scheme !== null) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return { refused: "git_url is not a valid URL" }
    }
    const name = scheme[1]!.toLowerCase()
    if (name !== "file") {
      if (parsed.hostname === "") return { refused: "git_url must name a host" }
      // `ssh://-oProxyCommand=…` would reach ssh as an option.
      if (parsed.hostname.startsWith("-") || decodeURIComponent(parsed.username).startsWith("-")) {
        return { refused: "git_url's host and user must not start with \"-\"" }
      }
    }
    return { scheme: name === "git+ssh" || name === "ssh+git" ? "ssh" : name }
  }
  // scp-like syntax: [user@]host:path, with no slash before the colon.
  const scp = /^([^/:]+):/.exec(url)
  if (scp !== null && !/^[A-Za-z]:$/.test(`${scp[1]}:`)) {
    const host = scp[1]!.slice(scp[1]!.lastIndexOf("@") + 1)
    if (scp[1]!.startsWith("-") || host.startsWith("-")) return { refused: "git_url's host and user must not start with \"-\"" }
    return { scheme: "ssh" }
  }
  return { refused: "git_url must be a URL such as https://host/owner/repo.git; connect a local directory with path" }
}

/**
 * The local path a `file:` git URL names, percent-escapes decoded as git decodes them. Only
 * `file:///path` and `file://localhost/path`: git ignores any other host (`file://host/etc` reads
 * `/etc`) and reads brackets, `?` and `#` its own way, so such URLs are refused rather than guessed.
 */
export const fileUrlPath = (url: string): { readonly path: string } | { readonly refused: string } => {
  const refused = { refused: "a file: git_url must be file:///absolute/path (no host other than localhost, no query or fragment)" }
  const match = /^file:\/\/(?:localhost)?(\/[^?#\[\]]*)$/i.exec(url)
  if (match === null) return refused
  let decoded: string
  try {
    decoded = decodeURIComponent(match[1]!)
  } catch {
    return refused
  }
  return decoded.includes("\0") ? refused : { path: decoded }
}

interface GitRun {
  readonly stdout: string
  readonly stderr: string
}

class GitFailed {
  constructor(readonly message: string) {}
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const allowed = new Set<string>(options.gitSchemes ?? ["https"])
    const timeout = options.gitTimeout ?? defaultGitTimeout
    const cloneDir = path.resolve(options.cloneDir)

    /** The roots as given (resolved) and as real paths; a root that does not exist allows nothing. */
    const roots = Effect.promise(async () => {
      const out: Array<{ readonly given: string; readonly real: string }> = []
      for (const root of options.roots) {
        const given = path.resolve(root)
        const real = await fs.realpath(given).catch(() => undefined)
        if (real !== undefined) out.push({ given, real })
      }
      return out
    })

    const noRoots = new Forbidden({
      message: `Local paths are not accepted: the operator has allowed no directories (set ${rootsVariable} to allow some)`
    })
    const outsideOf = (field: "path" | "git_url") =>
      new Forbidden({ message: `${field} is outside the directories the operator allows (${rootsVariable})` })
    /** How a message names the path: a `path` itself, or the one a `file:` git URL names. */
    const named = (field: "path" | "git_url") => field === "path" ? "path" : "git_url's path"

    /** The directory's real path, when it is inside a root; the same refusal for any path outside. */
    const resolvePath = (
      given: string,
      field: "path" | "git_url" = "path"
    ): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.gen(function*() {
        if (options.roots.length === 0) return yield* noRoots
        if (!path.isAbsolute(given)) return yield* invalid(`${named(field)} must be absolute`, field)
        const allowedRoots = yield* roots
        if (allowedRoots.length === 0) return yield* noRoots
        const lexical = path.resolve(given)
        if (!allowedRoots.some((root) => isInside(root.given, lexical) || isInside(root.real, lexical))) return yield* outsideOf(field)
        const real = yield* Effect.promise(() => fs.realpath(lexical).catch(() => undefined))
        if (real === undefined) return yield* invalid(`${named(field)} does not exist or cannot be read`, field)
        // A symlink inside a root may lead out of it: only the real path counts.
        if (!allowedRoots.some((root) => isInside(root.real, real))) return yield* outsideOf(field)
        const stat = yield* Effect.promise(() => fs.stat(real).catch(() => undefined))
        if (stat === undefined || !stat.isDirectory()) return yield* invalid(`${named(field)} is not a directory`, field)
        return real
      })

    const insideRoots = (real: string) => Effect.map(roots, (all) => all.some((root) => isInside(root.real, real)))

    /**
     * The git directory a `file:` URL's checked directory holds, as git's `upload-pack` finds it
     * (`<dir>/.git`, a `.git` file's `gitdir:`, else the directory itself when bare), when it and
     * everything git would read through it — the common directory of a worktree, the object
     * stores its `alternates` name, any symlink in it — are inside the roots. It is the path git
     * is then given, so git has nothing left to guess (given a directory that is no repository,
     * git would try `<dir>.git`, which may be outside).
     */
    const gitDirectoryOf = (directory: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.gen(function*() {
        const notRepository = invalid("git_url's path is not a git repository", "git_url")
        const dotGit = path.join(directory, ".git")
        const entry = yield* Effect.promise(() => fs.lstat(dotGit).catch(() => undefined))
        let candidate = directory
        if (entry?.isFile() === true) {
          const text = yield* Effect.promise(() => fs.readFile(dotGit, "utf8").catch(() => ""))
          const target = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim()
          if (target === undefined) return yield* notRepository
          candidate = path.resolve(directory, target)
        } else if (entry !== undefined) candidate = dotGit
        const gitDir = yield* Effect.promise(() => fs.realpath(candidate).catch(() => undefined))
        if (gitDir === undefined) return yield* notRepository
        if (!(yield* insideRoots(gitDir))) return yield* outsideOf("git_url")
        const present = (name: string) => Effect.promise(() => fs.lstat(path.join(gitDir, name)).then(() => true, () => false))
        // What upload-pack takes for a repository (HEAD, objects, refs), and nothing it would look at first.
        if (!(yield* present("HEAD")) || (yield* present(".git"))) return yield* notRepository
        const leaks = yield* Effect.promise(() => leadsOutside(gitDir))
        if (leaks) return yield* outsideOf("git_url")
        return gitDir
      })

    /**
     * Whether anything git reads through `gitDir` lies outside the roots: a symlink (to a pack, a
     * ref, the objects), the `commondir` of a worktree, an `alternates` object store — followed
     * into those directories too, a bounded number of them.
     */
    const leadsOutside = async (gitDir: string): Promise<boolean> => {
      const allowedRoots = await Effect.runPromise(roots)
      const inside = (real: string) => allowedRoots.some((root) => isInside(root.real, real))
      const pending = [gitDir]
      const seen = new Set<string>()
      while (pending.length > 0) {
        const dir = pending.pop()!
        if (seen.has(dir)) continue
        if (seen.size >= 16) return true
        seen.add(dir)
        const indirections = [
          ...(await fs.readFile(path.join(dir, "commondir"), "utf8").then((text) => [path.resolve(dir, text.trim())], () => [])),
          ...(await fs.readFile(path.join(dir, "objects", "info", "alternates"), "utf8").then(
            (text) => text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
              .map((line) => path.resolve(dir, "objects", line)),
            () => []
          ))
        ]
        for (const target of indirections) {
          const real = await fs.realpath(target).catch(() => undefined)
          if (real === undefined) continue
          if (!inside(real)) return true
          pending.push(real)
        }
        const walk = async (current: string): Promise<boolean> => {
          const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => [])
          for (const entry of entries) {
            const full = path.join(current, entry.name)
            if (entry.isSymbolicLink()) {
              const real = await fs.realpath(full).catch(() => undefined)
              if (real !== undefined && !inside(real)) return true
            } else if (entry.isDirectory() && await walk(full)) return true
          }
          return false
        }
        if (await walk(dir)) return true
      }
      return false
    }

    /**
     * A `file:` URL is a local path: confined to the roots exactly like one (`..`, symlinks and
     * percent-encoded separators included), then handed to git as the real path of the git
     * directory checked, never as the URL given (git reads hosts, brackets and escapes in
     * `file://` URLs in ways of its own).
     */
    const localGitUrl = (url: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.gen(function*() {
        const local = fileUrlPath(url)
        if ("refused" in local) return yield* invalid(local.refused, "git_url")
        const directory = yield* resolvePath(local.path, "git_url")
        const gitDir = yield* gitDirectoryOf(directory)
        // git decodes %XX in a URL's path: a literal "%" is written as one.
        return `file://${gitDir.replace(/%/g, "%25")}`
      })

    /**
     * The addresses `url`'s host resolves to, all public (none to check for `file:`); a host that
     * does not resolve here is refused, since nothing could be checked.
     */
    const publicHost = (url: string, scheme: string): Effect.Effect<{ readonly pin: ReadonlyArray<string> }, Forbidden> =>
      Effect.gen(function*() {
        const endpoint = endpointOf(url, scheme)
        if (endpoint === undefined || options.privateHosts === true) return { pin: [] }
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

    /** The URL as git is given it, and the settings that pin its host, when it may be cloned. */
    const allowedGitUrl = (given: string): Effect.Effect<{ readonly url: string; readonly pin: ReadonlyArray<string> }, InvalidRequest | Forbidden> => {
      const url = withLowerScheme(given)
      const scheme = gitUrlScheme(url)
      if ("refused" in scheme) return Effect.fail(invalid(scheme.refused, "git_url"))
      if (!allowed.has(scheme.scheme)) {
        return Effect.fail(
          new Forbidden({
            message: `git URLs with scheme "${scheme.scheme}" are not accepted; the operator allows ${
              [...allowed].join(", ") || "none"
            } (${schemesVariable})`
          })
        )
      }
      if (scheme.scheme === "file") return Effect.map(localGitUrl(url), (local) => ({ url: local, pin: [] }))
      return Effect.map(publicHost(url, scheme.scheme), ({ pin }) => ({ url, pin }))
    }

    // The URL is stored as given (a `file:` one is confined again before every clone).
    const checkGitUrl = (url: string): Effect.Effect<string, InvalidRequest | Forbidden> =>
      Effect.as(allowedGitUrl(url), withLowerScheme(url))

    /** Only the allowed protocols, for every step git takes (redirects and submodules too). */
    const gitConfig = [
      "-c",
      "protocol.allow=never",
      ...[...allowed].flatMap((scheme) => ["-c", `protocol.${scheme}.allow=always`]),
      ...(allowed.has("file") ? [] : ["-c", "protocol.file.allow=never"]),
      "-c",
      "core.symlinks=false",
      // A redirect would lead to a host nobody checked (a public server bouncing git inwards).
      ...(options.privateHosts === true ? [] : ["-c", "http.followRedirects=false"])
    ]

    /** What git said, without the server's own paths (`Cloning into '<dir>'…`). */
    const told = (stderr: string) =>
      stderr.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("Cloning into")).slice(-3).join(" ")
        .split(cloneDir).join("<clone>")

    const git = (args: ReadonlyArray<string>, url: string, pin: ReadonlyArray<string> = []): Effect.Effect<GitRun, GitFailed> =>
      Effect.async<GitRun, GitFailed>((resume, signal) => {
        execFile(
          "git",
          [...gitConfig, ...pin, ...args],
          {
            signal,
            timeout: Duration.toMillis(timeout),
            killSignal: "SIGKILL",
            maxBuffer: 4 * 1024 * 1024,
            env: {
              ...process.env,
              GIT_TERMINAL_PROMPT: "0",
              GIT_SSH_COMMAND: process.env["GIT_SSH_COMMAND"] ?? "ssh -o BatchMode=yes",
              LC_ALL: "C"
            }
          },
          (error, stdout, stderr) => {
            if (error === null) return resume(Effect.succeed({ stdout, stderr }))
            const code = (error as NodeJS.ErrnoException).code
            const message = code === "ENOENT"
              ? "git is not installed on the server"
              : (error as { killed?: boolean }).killed
              ? `git ${args[0]} did not finish within ${Duration.format(timeout)}`
              : told(stderr) || error.message.split(cloneDir).join("<clone>")
            resume(Effect.fail(new GitFailed(maskUrl(message, url).slice(0, 500))))
          }
        )
      })

    const exists = (file: string) => Effect.promise(() => fs.stat(file).then(() => true, () => false))
    const remove = (dir: string) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))

    const clone = (connection: RepositoryConnection): Effect.Effect<string, IndexFailed> =>
      Effect.gen(function*() {
        // Refused URLs were refused on connect; an operator may have narrowed the schemes since,
        // and a name may resolve elsewhere now.
        const { pin, url } = yield* allowedGitUrl(connection.location).pipe(Effect.mapError((error) => new IndexFailed({ message: error.message })))
        const dir = path.join(cloneDir, connection.workspace_id, connection.id)
        if (yield* exists(path.join(dir, ".git"))) {
          const fetched = yield* git(["-C", dir, "fetch", "--depth", "1", "--no-tags", "origin"], url, pin).pipe(
            Effect.zipRight(git(["-C", dir, "reset", "--hard", "--quiet", "FETCH_HEAD"], url)),
            Effect.zipRight(git(["-C", dir, "clean", "-ffdxq"], url)),
            Effect.as(true),
            // A clone that cannot be brought up to date is cloned again.
            Effect.catchAll(() => Effect.succeed(false))
          )
          if (fetched) return dir
        }
        const fresh = `${dir}.tmp-${randomBytes(4).toString("hex")}`
        yield* Effect.promise(() => fs.mkdir(path.dirname(dir), { recursive: true }))
        yield* git(["clone", "--depth", "1", "--no-tags", "--single-branch", "--", url, fresh], url, pin).pipe(
          Effect.tapError(() => remove(fresh)),
          Effect.mapError((error) => new IndexFailed({ message: `Cloning failed: ${error.message}` })),
          Effect.onInterrupt(() => remove(fresh))
        )
        yield* remove(dir)
        yield* Effect.promise(() => fs.rename(fresh, dir))
        return dir
      })

    const checkout = (connection: RepositoryConnection): Effect.Effect<string, IndexFailed> =>
      connection.source === "git"
        // The clone's real path: the indexer confines every read to the directory it is given.
        ? Effect.flatMap(clone(connection), (dir) => Effect.promise(() => fs.realpath(dir)))
        : resolvePath(connection.location).pipe(
          Effect.mapError((error) => new IndexFailed({ message: `The repository's directory can no longer be indexed: ${error.message}` }))
        )

    // Only what this code made is ever removed, whatever else the directory holds.
    const prune = (keep: ReadonlySet<string>) =>
      Effect.promise(async () => {
        const workspaces = await fs.readdir(cloneDir, { withFileTypes: true }).catch(() => [])
        for (const workspace of workspaces) {
          if (!workspace.isDirectory() || !/^wsp_[0-9a-z]+$/.test(workspace.name)) continue
          const dir = path.join(cloneDir, workspace.name)
          const clones = await fs.readdir(dir).catch(() => [])
          let left = clones.length
          for (const name of clones) {
            const repositoryId = name.split(".tmp-")[0]!
            if (keep.has(repositoryId) || !/^rep_[0-9a-z]+$/.test(repositoryId)) continue
            await fs.rm(path.join(dir, name), { recursive: true, force: true })
            left--
          }
          if (left === 0) await fs.rmdir(dir).catch(() => undefined)
        }
      })

    return RepositorySources.of({ checkPath: (given) => resolvePath(given), checkGitUrl, checkout, prune })
  })

export const layer = (options: Options) => Layer.effect(RepositorySources, make(options))
