/**
 * Repositories: for each workspace the person may use (their personal one and their
 * organizations'), the connected repository and its indexing, with the means to connect one.
 * Org workspaces are managed by the org's admins; a member sees the status and the server
 * refuses the rest in its own words.
 */
import { Effect } from "effect"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useResource } from "../../ui/useApi.js"
import { WorkspaceRepository } from "./WorkspaceRepository.js"

export const RepositoryPage = () => {
  const [loaded] = useResource((client) =>
    Effect.all({
      workspaces: client.workspaces.list({ urlParams: { limit: 100 } }),
      profile: client.me.me()
    }, { concurrency: "unbounded" })
  )
  return (
    <Page title="Repositories">
      <p>
        Connect a code repository to a workspace: Huddle indexes it, and answers asked in that workspace cite its
        files and lines.
      </p>
      {loaded._tag === "Loading" ? <Loading what="your workspaces" /> : null}
      {loaded._tag === "Failed" ? <ProblemNote problem={loaded.problem} /> : null}
      {loaded._tag === "Loaded"
        ? loaded.value.workspaces.data.map((workspace) => (
          <WorkspaceRepository
            key={workspace.id}
            workspace={workspace}
            org={loaded.value.profile.orgs.find((membership) => membership.id === workspace.org_id) ?? null}
          />
        ))
        : null}
    </Page>
  )
}
