/** The memories page's data, as the typed client answers it. */
import type { Answer } from "../../answer.js"
import type { Client } from "../../api.js"

export type MemoryPage = Answer<Client["memories"]["list"]>
export type Memory = MemoryPage["data"][number]
export type Workspace = Answer<Client["workspaces"]["list"]>["data"][number]
export type Membership = Answer<Client["me"]["me"]>["orgs"][number]

/** Who reads a memory, said plainly: its scope and where it applies. */
export const scopeLabel = (memory: Memory, workspaces: ReadonlyArray<Workspace>, orgs: ReadonlyArray<Membership>): string => {
  if (memory.scope === "personal") return "Personal: only you"
  if (memory.scope === "org") {
    const org = orgs.find((membership) => membership.id === memory.org_id)
    return `Organization: every member of ${org?.name ?? memory.org_id}`
  }
  const workspace = workspaces.find((w) => w.id === memory.workspace_id)
  if (workspace === undefined) return `Workspace ${memory.workspace_id}`
  return workspace.personal ? "Workspace: your personal workspace" : `Workspace: ${workspace.name}, for its organization's members`
}
