/**
 * The organization and workspace a request runs in. An API key bound to an org runs in it (and
 * nowhere else); otherwise an explicit `org_id`, then the `OpenAI-Organization` or
 * `Huddle-Organization` header, selects an org the caller belongs to; otherwise the request runs
 * in the personal context. A workspace must be the caller's own.
 */
import { Context, Effect, Layer, Option } from "effect"
import { NotFound } from "../Errors.js"
import type { Principal } from "../Principal.js"
import { WorkspaceRepository } from "../ports/WorkspaceRepository.js"
import { OrgAccess, orgNotFound } from "./OrgAccess.js"

export interface Requested {
  readonly orgId?: string | null | undefined
  /** From the `OpenAI-Organization` / `Huddle-Organization` header. */
  readonly headerOrgId?: string | null | undefined
  readonly workspaceId?: string | null | undefined
}

export interface Resolved {
  readonly orgId: string | null
  readonly workspaceId: string | null
}

export interface Service {
  readonly resolve: (principal: Principal, requested: Requested) => Effect.Effect<Resolved, NotFound>
}

export class RequestContext extends Context.Tag("@huddle/domain/RequestContext")<RequestContext, Service>() {}

export const make = Effect.gen(function*() {
  const access = yield* OrgAccess
  const workspaces = yield* WorkspaceRepository

  const resolveOrg = (principal: Principal, requested: Requested): Effect.Effect<string | null, NotFound> => {
    const asked = requested.orgId ?? requested.headerOrgId ?? null
    if (principal.bound_org_id !== null) {
      return asked === null || asked === principal.bound_org_id ? Effect.succeed(principal.bound_org_id) : Effect.fail(orgNotFound)
    }
    return asked === null ? Effect.succeed(null) : Effect.as(access.member(principal, asked), asked)
  }

  const resolveWorkspace = (principal: Principal, workspaceId: string | null | undefined) =>
    workspaceId === null || workspaceId === undefined
      ? Effect.succeed(null)
      : workspaces.findById(workspaceId).pipe(
        Effect.flatMap((found) =>
          Option.isSome(found) && found.value.owner_id === principal.user.id
            ? Effect.succeed(workspaceId)
            : Effect.fail(new NotFound({ message: "Workspace not found" }))
        )
      )

  return RequestContext.of({
    resolve: (principal, requested) =>
      Effect.all({
        orgId: resolveOrg(principal, requested),
        workspaceId: resolveWorkspace(principal, requested.workspaceId)
      })
  })
})

export const layer = Layer.effect(RequestContext, make)
