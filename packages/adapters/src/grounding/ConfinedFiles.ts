/**
 * Opening a repository's files so that only what lies inside its directory is ever read, even
 * while someone swaps files for symlinks. Checking a path and then opening it is two steps, and a
 * link swapped in between is followed by the open; so the file is opened first, what was opened is
 * then checked through the descriptor itself, and the content is read from that same descriptor.
 *
 * On Linux `/proc/self/fd/<fd>` names the file a descriptor holds (the kernel's path, no symlinks
 * left). Elsewhere the path is resolved after the open and must still name the very file opened
 * (same device and inode), which narrows the window without closing it: the service's documented
 * platform is Linux (decision 0035).
 */
import { closeSync, constants, type Dirent, existsSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, type Stats, statSync } from "node:fs"
import { sep } from "node:path"

/** Whether `path` (a real path) lies inside `root` (a real path). */
export const isInside = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)

const procFd = process.platform === "linux" && existsSync("/proc/self/fd")

/** Never blocks on a FIFO and never takes a terminal: opening is safe for whatever the path holds. */
const readFlags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0)

export type Opened =
  | { readonly kind: "opened"; readonly fd: number; readonly stats: Stats }
  | { readonly kind: "absent" | "unreadable" | "outside" }

/**
 * Test seam: runs just before a file is opened, after the caller decided to read it, where a
 * test swaps the file for a link leading out (the window a real race hits only now and then).
 */
export const hooks: { beforeOpen: ((absolute: string) => void) | undefined } = { beforeOpen: undefined }

/** The real path of what `fd` holds, or `undefined` when it cannot be told (gone, or not the file at `absolute`). */
const whereIs = (fd: number, absolute: string, stats: Stats): string | undefined => {
  if (procFd) {
    let real: string
    try {
      real = readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      return undefined
    }
    // A file removed since it was opened: its last name, which no longer holds it.
    return real.endsWith(" (deleted)") ? undefined : real
  }
  try {
    const real = realpathSync.native(absolute)
    const now = statSync(real)
    return now.dev === stats.dev && now.ino === stats.ino ? real : undefined
  } catch {
    return undefined
  }
}

/**
 * Opens `absolute` (following links, as a link to a file inside the root is a file of the
 * repository) and keeps it open only if what was opened is inside `root` (a real path). The caller
 * reads from `fd` and closes it.
 */
export const openInside = (root: string, absolute: string): Opened => {
  // A socket, a FIFO or a device is no file of a repository: never opened (opening some has effects).
  const entry = lstatSync(absolute, { throwIfNoEntry: false })
  if (entry === undefined) return { kind: "absent" }
  if (!entry.isFile() && !entry.isDirectory() && !entry.isSymbolicLink()) return { kind: "absent" }
  let fd: number
  try {
    hooks.beforeOpen?.(absolute)
    fd = openSync(absolute, readFlags)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { kind: code === "ENOENT" || code === "ENOTDIR" ? "absent" : "unreadable" }
  }
  try {
    const stats = fstatSync(fd)
    const real = whereIs(fd, absolute, stats)
    if (real === undefined || !isInside(root, real)) {
      closeSync(fd)
      return { kind: real === undefined ? "absent" : "outside" }
    }
    return { kind: "opened", fd, stats }
  } catch {
    closeSync(fd)
    return { kind: "unreadable" }
  }
}

/** The content of the file at `absolute` when it is inside `root`; `undefined` otherwise or unreadable. */
export const readInside = (root: string, absolute: string): Buffer | undefined => {
  const opened = openInside(root, absolute)
  if (opened.kind !== "opened") return undefined
  try {
    return opened.stats.isFile() ? readFileSync(opened.fd) : undefined
  } catch {
    return undefined
  } finally {
    closeSync(opened.fd)
  }
}

/**
 * The entries of the directory at `absolute` when it is inside `root`; `undefined` otherwise or
 * unreadable. On Linux the listing is of the directory opened and checked (through its
 * descriptor's `/proc` name); elsewhere of its path again, which must still be the one checked.
 */
export const listInside = (root: string, absolute: string): Array<Dirent> | undefined => {
  const opened = openInside(root, absolute)
  if (opened.kind !== "opened") return undefined
  try {
    if (!opened.stats.isDirectory()) return undefined
    return readdirSync(procFd ? `/proc/self/fd/${opened.fd}` : absolute, { withFileTypes: true })
  } catch {
    return undefined
  } finally {
    closeSync(opened.fd)
  }
}
