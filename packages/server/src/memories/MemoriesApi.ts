import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Memory, MemoryContent, MemoryScope } from "@huddle/domain/memories/Memory"
import { Id } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import * as Envelope from "../shared/Envelope.js"
import * as Idempotency from "../shared/Idempotency.js"
import { ListParams, page } from "../shared/Lists.js"
import { RateLimited } from "../shared/RateLimit.js"
import { Authenticated } from "../shared/Security.js"

const OptionalId = Schema.optionalWith(Schema.NullOr(Id), { default: () => null })

export const CreateMemoryRequest = Schema.Struct({
  content: MemoryContent,
  scope: MemoryScope,
  org_id: OptionalId.annotations({ description: "Required for scope \"org\"; not allowed otherwise" }),
  workspace_id: OptionalId.annotations({
    description: "For scope \"workspace\": a workspace the caller may use, their own or one of their organization's (default: the caller's personal workspace)"
  })
})

export const UpdateMemoryRequest = Schema.Struct({ content: MemoryContent })

export const MemoryListParams = Schema.Struct({
  ...ListParams.fields,
  scope: Schema.optional(MemoryScope),
  org_id: Schema.optional(Id),
  workspace_id: Schema.optional(Id)
})

export const MemoryPage = page(Memory)

const MemoryIdPath = Schema.Struct({ id: Id })

export class MemoriesApi extends HttpApiGroup.make("memories")
  .add(
    HttpApiEndpoint.post("create", "/memories")
      .annotate(OpenApi.Summary, "Create a memory")
      .annotateContext(Idempotency.keyed)
      .setPayload(CreateMemoryRequest)
      .addSuccess(Memory, { status: 201 })
      .addError(Envelope.Forbidden)
      .annotate(
        OpenApi.Description,
        "Create a memory: personal (the caller's alone), workspace (a workspace the caller may use; whoever may use it reads it) or org (admins only; every member reads it)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/memories")
      .annotate(OpenApi.Summary, "List memories")
      .setUrlParams(MemoryListParams)
      .addSuccess(MemoryPage)
      .annotate(
        OpenApi.Description,
        "The memories the caller may read, newest first; narrow with `scope`, `org_id` or `workspace_id`, page with `limit` and `cursor`."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/memories/:id")
      .annotate(OpenApi.Summary, "Get a memory")
      .setPath(MemoryIdPath)
      .addSuccess(Memory)
      .annotate(OpenApi.Description, "One memory the caller may read.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/memories/:id")
      .annotate(OpenApi.Summary, "Update a memory")
      .setPath(MemoryIdPath)
      .setPayload(UpdateMemoryRequest)
      .addSuccess(Memory)
      .addError(Envelope.Forbidden)
      .annotate(OpenApi.Description, "Replace a memory's content (its author; for an org memory, or a memory of an org workspace, also an admin of the org).")
  )
  .add(
    HttpApiEndpoint.del("delete", "/memories/:id")
      .annotate(OpenApi.Summary, "Delete a memory")
      .setPath(MemoryIdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Envelope.Forbidden)
      .annotate(OpenApi.Description, "Delete a memory (its author; for an org memory, or a memory of an org workspace, also an admin of the org).")
  )
  .addError(Envelope.NotFound)
  .middleware(Idempotency.Idempotent)
  .middleware(RateLimited)
  .middleware(Authenticated)
  .annotate(OpenApi.Title, "Memories")
  .annotate(OpenApi.Description, "Personal, workspace and organization memories, put in front of model calls.")
{}
