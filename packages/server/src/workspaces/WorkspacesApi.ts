import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { WorkspaceName } from "@huddle/domain/accounts/Workspace"
import { WorkspaceView } from "@huddle/domain/workspaces/Workspaces"
import { RepositoryStatus } from "@huddle/domain/grounding/RepositoryConnection"
import { maxLines, RepositoryFile } from "@huddle/domain/grounding/RepositoryFile"
import { Id, Line } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import { OrgIdPath } from "../orgs/OrgsApi.js"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { ListParams, page } from "../shared/Lists.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

const WorkspaceIdPath = Schema.Struct({ id: Id })
const OrgWorkspacePath = Schema.Struct({ ...OrgIdPath.fields, id: Id })

/** Exactly one of the two; which one is missing or extra is answered as a 400 naming the field. */
export const ConnectRepositoryRequest = Schema.Struct({
  path: Schema.optional(
    Line.pipe(Schema.maxLength(4096, { message: () => "path must be at most 4096 characters" })).annotations({
      description: "An absolute directory on the server, inside the roots the operator allows (`HUDDLE_REPO_ROOTS`)"
    })
  ),
  git_url: Schema.optional(
    Line.pipe(Schema.maxLength(2048, { message: () => "git_url must be at most 2048 characters" })).annotations({
      description: "A git URL with a scheme the operator allows (`HUDDLE_REPO_GIT_SCHEMES`, default `https`); cloned shallow by the server. A `file:///path` URL names a directory on the server and is held to `HUDDLE_REPO_ROOTS` like `path`"
    })
  )
}).annotations({ description: "Either `path` or `git_url`, not both" })

const LineNumber = (name: string) =>
  Schema.optional(
    Schema.NumberFromString.pipe(
      Schema.int({ message: () => `${name} must be an integer` }),
      Schema.between(1, 10_000_000, { message: () => `${name} must be a line number from 1` })
    )
  )

export const RepositoryFileParams = Schema.Struct({
  path: Line.pipe(
    Schema.minLength(1, { message: () => "path must not be empty" }),
    Schema.maxLength(4096, { message: () => "path must be at most 4096 characters" })
  ).annotations({ description: "The file's path relative to the repository's root, with `/` separators" }),
  from: LineNumber("from").annotations({ description: "The first line to return (default 1)" }),
  to: LineNumber("to").annotations({ description: `The last line to return (default and at most: ${maxLines} lines from \`from\`)` })
})

export const CreateWorkspaceRequest = Schema.Struct({ name: WorkspaceName })

export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .add(
    HttpApiEndpoint.get("list", "/workspaces")
      .annotate(OpenApi.Summary, "List workspaces")
      .setUrlParams(ListParams)
      .addSuccess(page(WorkspaceView))
      .annotate(
        OpenApi.Description,
        "The workspaces the caller may use, newest first: their personal workspace and the workspaces of their organizations (with `org_id`), each with its repository's status in brief."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/workspaces/:id")
      .annotate(OpenApi.Summary, "Get a workspace")
      .setPath(WorkspaceIdPath)
      .addSuccess(WorkspaceView)
      .annotate(OpenApi.Description, "A workspace the caller may use.")
  )
  .add(
    HttpApiEndpoint.get("repository", "/workspaces/:id/repository")
      .annotate(OpenApi.Summary, "Get the repository's status")
      .setPath(WorkspaceIdPath)
      .addSuccess(RepositoryStatus)
      .annotate(
        OpenApi.Description,
        "The connected repository: where it comes from, its indexing status (`pending`, `indexing`, `ready`, `failed`) and progress, and for the stored snapshot the indexed files by category and the skipped files by reason, with the first 100 paths of each. 404 when none is connected."
      )
  )
  .add(
    HttpApiEndpoint.get("file", "/workspaces/:id/repository/files")
      .annotate(OpenApi.Summary, "Read an indexed file")
      .setPath(WorkspaceIdPath)
      .setUrlParams(RepositoryFileParams)
      .addSuccess(RepositoryFile)
      .annotate(
        OpenApi.Description,
        `An indexed file of the connected repository's stored snapshot (what answers cite): its lines \`from\`..\`to\`, at most ${maxLines} at a time, with its line count. ` +
          "Whoever may read the repository's status. 404 when no repository is connected, nothing is indexed yet, or the path is not an indexed file (skipped files have no text)."
      )
  )
  .add(
    HttpApiEndpoint.put("connect", "/workspaces/:id/repository")
      .annotate(OpenApi.Summary, "Connect a repository")
      .setPath(WorkspaceIdPath)
      .setPayload(ConnectRepositoryRequest)
      .addSuccess(RepositoryStatus, { status: 202 })
      .addError(Envelope.Forbidden)
      .annotate(
        OpenApi.Description,
        "Connect a local directory (`path`) or a git repository (`git_url`), replacing any connected one, and start indexing it in the background (answered at once, `pending`; poll the status). " +
          "The owner of a personal workspace or an admin of an org workspace's organization. A path outside the allowed roots (a `file:` URL's too), or a URL with a scheme that is not allowed, is 403."
      )
  )
  .add(
    HttpApiEndpoint.del("disconnect", "/workspaces/:id/repository")
      .annotate(OpenApi.Summary, "Disconnect the repository")
      .setPath(WorkspaceIdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Forbidden)
      .annotate(OpenApi.Description, "Disconnect the repository and delete its stored index (and the server's clone).")
  )
  .add(
    HttpApiEndpoint.post("reindex", "/workspaces/:id/repository/reindex")
      .annotate(OpenApi.Summary, "Re-index the repository")
      // A retried request replays the first answer instead of asking for yet another run.
      .annotateContext(Idempotency.keyed)
      .setPath(WorkspaceIdPath)
      .addSuccess(RepositoryStatus, { status: 202 })
      .addError(Envelope.Forbidden)
      .annotate(
        OpenApi.Description,
        "Index the repository again (a git repository is fetched anew); only what changed is rewritten. Asked while a run is going, it runs once more after it."
      )
  )
  .add(
    HttpApiEndpoint.post("createForOrg", "/orgs/:orgId/admin/workspaces")
      .annotate(OpenApi.Summary, "Create an org workspace")
      .annotateContext(Idempotency.keyed)
      .setPath(OrgIdPath)
      .setPayload(CreateWorkspaceRequest)
      .addSuccess(WorkspaceView, { status: 201 })
      .addError(Envelope.Forbidden)
      .addError(Envelope.Conflict)
      .annotate(
        OpenApi.Description,
        "Create a workspace of the organization (admin); every member uses it. Names are unique in the organization, in any case (409)."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteForOrg", "/orgs/:orgId/admin/workspaces/:id")
      .annotate(OpenApi.Summary, "Delete an org workspace")
      .setPath(OrgWorkspacePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Forbidden)
      .annotate(OpenApi.Description, "Delete a workspace of the organization (admin), with its memories and its repository.")
  )
  .addError(Envelope.NotFound)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Workspaces")
  .annotate(
    OpenApi.Description,
    "Personal and organization workspaces, and the code repository each may connect to ground answers in."
  )
{}
