/**
 * Every error the service answers with, once: its tag, its wire CODE, its HTTP status, what it
 * means and, for the errors a JSON-RPC method may fail with, its JSON-RPC application code. The
 * three dialects derive from this table and from nothing else:
 * - the Huddle envelope `{ "error": CODE, "message" }` (shared/Envelope.ts: one schema per entry
 *   that has an error class);
 * - OpenAI's envelope (openai/OpenAiErrors.ts: `code` is the CODE, `type` OpenAI's word for the
 *   status);
 * - Anthropic's envelope (anthropic/AnthropicErrors.ts: `error.type` Anthropic's word for the status);
 * - JSON-RPC error objects (rpc/RpcErrors.ts: `code` is the application code, `data.error` the
 *   CODE, the HTTP status of a single call the entry's status).
 *
 * Which dialect answers is a property of the endpoint group (`Dialect`, below), not of a path;
 * the one exception is a path of OpenAI's API that no group serves, answered in OpenAI's
 * envelope for the OpenAI client that called it (edge/ErrorTranslation.ts, `dialectOf`).
 *
 * The CODE is the tag in UPPER_SNAKE (`Errors.codeOf`): the rule by which the domain records a
 * failed intent's code, so the code stored on an intent is the code this table answers with.
 */
import * as Errors from "@huddle/domain/shared/Errors"
import { Context } from "effect"

/**
 * The error dialect of an endpoint group, as an annotation on the group (`huddle` when absent):
 * the edge reads it to choose the envelope of every failure on that group's paths.
 * `json-rpc` answers its calls' errors in the handler; the failures before any call runs are the
 * Huddle envelope (docs/decisions/0008-json-rpc.md).
 */
export class Dialect extends Context.Tag("@huddle/server/ErrorTable/Dialect")<Dialect, "huddle" | "openai" | "anthropic" | "json-rpc">() {}

export interface Entry {
  readonly status: number
  /** For the OpenAPI document and the error reference. */
  readonly description: string
  /** The JSON-RPC application code (-32000 … -32099), for the errors a method may fail with. */
  readonly rpc?: {
    readonly code: number
    /** What it means to a JSON-RPC caller, for the OpenRPC document. */
    readonly meaning: string
  }
}

/**
 * -32000 … -32099 is JSON-RPC's range for implementation-defined server errors; see
 * docs/decisions/0008-json-rpc.md.
 */
const entries = {
  InvalidRequest: {
    status: 400,
    description: "The request is malformed or a parameter is invalid",
    rpc: {
      code: -32000,
      meaning: "The params are well-formed but cannot be served as asked (an input too long for the model)"
    }
  },
  Unauthorized: {
    status: 401,
    description: "Missing or invalid credentials",
    rpc: { code: -32008, meaning: "The credential was revoked or expired while the call was being served" }
  },
  InsufficientCredits: {
    status: 402,
    description: "The credit balance cannot cover the request",
    rpc: { code: -32001, meaning: "The credit balance cannot cover the request" }
  },
  Forbidden: {
    status: 403,
    description: "The caller's role does not allow this operation",
    rpc: { code: -32003, meaning: "The caller's role does not allow this operation" }
  },
  SessionRequired: { status: 403, description: "Needs a web-app session; an API key is not enough" },
  PolicyViolation: {
    status: 403,
    description: "An enforced organization policy forbids this",
    rpc: { code: -32002, meaning: "An enforced organization policy forbids this" }
  },
  NotFound: {
    status: 404,
    description: "No such resource",
    rpc: { code: -32004, meaning: "No such resource or model, or the caller may not see it" }
  },
  MethodNotAllowed: {
    status: 405,
    description: "The path exists, but not with this method; `Allow` lists the methods it has"
  },
  Conflict: {
    status: 409,
    description: "Conflicts with existing state",
    rpc: { code: -32005, meaning: "Conflicts with the resource's state" }
  },
  RateLimited: {
    status: 429,
    description: "Too many requests of this kind from this credential; retry after `Retry-After` seconds",
    rpc: { code: -32007, meaning: "The caller's rate limit for this kind of method is spent; retry after the window" }
  },
  IdempotencyKeyReused: {
    status: 422,
    description:
      "This `Idempotency-Key` was used in the last 24 hours with a different request (method, path, query, organization header or body)"
  },
  IdempotencyInProgress: {
    status: 409,
    description: "The first request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds to get its answer"
  },
  UpstreamUnavailable: {
    status: 502,
    description: "No model could answer (after retries and fallback)",
    rpc: { code: -32006, meaning: "No model could answer (after retries and fallback)" }
  },
  PayloadTooLarge: { status: 413, description: "The request body is too large" },
  /** Answered by Node's HTTP parser, before any handler (Server.ts). */
  RequestHeadersTooLarge: { status: 431, description: "The request headers are too large" },
  Internal: { status: 500, description: "An unexpected failure; quote the request id" },
  ServiceUnavailable: {
    status: 503,
    description: "A dependency (the database or the rate-limit store) is unavailable; retry later"
  }
} as const satisfies Record<string, Entry>

export type Tag = keyof typeof entries

/** An entry with its tag and CODE. */
export type Row<T extends Tag = Tag> = (typeof entries)[T] & { readonly tag: T; readonly code: string }

const rowOf = <T extends Tag>(tag: T): Row<T> => ({ ...entries[tag], tag, code: Errors.codeOf({ _tag: tag }) })

export const table: { readonly [T in Tag]: Row<T> } = Object.fromEntries(
  (Object.keys(entries) as Array<Tag>).map((tag) => [tag, rowOf(tag)])
) as { readonly [T in Tag]: Row<T> }

export const rows: ReadonlyArray<Row> = Object.values(table)

export const isTag = (tag: unknown): tag is Tag => typeof tag === "string" && Object.hasOwn(entries, tag)

/** The entry of a typed error, or `undefined` for anything the table does not list. */
export const lookup = (error: unknown): Row | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && isTag(error._tag) ? table[error._tag] : undefined

/** The envelope of any failure: a listed typed error with its message, anything else as `INTERNAL`. */
export const envelopeOf = (error: unknown): { readonly status: number; readonly error: string; readonly message: string } => {
  const row = lookup(error)
  const message = typeof error === "object" && error !== null && "message" in error ? error.message : undefined
  return row !== undefined && typeof message === "string"
    ? { status: row.status, error: row.code, message }
    : { status: table.Internal.status, error: table.Internal.code, message: "An unexpected error occurred" }
}
