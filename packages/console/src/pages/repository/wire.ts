/** The repository page's data, as the typed client answers it. */
import type { Answer } from "../../answer.js"
import type { Client } from "../../api.js"

export type Workspace = Answer<Client["workspaces"]["list"]>["data"][number]
export type Status = Answer<Client["workspaces"]["repository"]>
export type Membership = Answer<Client["me"]["me"]>["orgs"][number]

/** Why the indexer left a file out, for people. */
export const skipReasons: Record<keyof NonNullable<Status["skipped"]>["by_reason"], string> = {
  binary: "binary (not text)",
  vendored: "vendored or build output",
  generated: "generated",
  minified: "minified",
  lockfile: "a lock file",
  too_large: "larger than 1 MiB",
  unreadable: "unreadable",
  outside_root: "a link leading outside the repository"
}

export const statusWords: Record<Status["status"], string> = {
  pending: "Waiting to be indexed",
  indexing: "Indexing",
  ready: "Indexed",
  failed: "Indexing failed"
}
