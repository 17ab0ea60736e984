/** What git would make of a git URL given to connect a repository: its scheme, or why it is refused; a `file:` URL's path. */

/** The URL with its scheme in lower case, as git expects it (`HTTPS://` is not a transport git knows). */
export const withLowerScheme = (url: string) => url.replace(/^([A-Za-z][A-Za-z0-9+.-]*):\/\//, (scheme) => scheme.toLowerCase())

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
