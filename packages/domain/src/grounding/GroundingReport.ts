/**
 * What grounding did for an answer, as the reply's `grounding` shows it: which mode ran and why,
 * how many files were analysed of those indexed, the excerpts the model was given, what happened
 * to the answer's citations, and for a coverage question the complete computed list.
 */
import { Schema } from "effect"

export const CategoryCounts = Schema.Struct({ config: Schema.Int, source: Schema.Int, test: Schema.Int, docs: Schema.Int })

export class GroundingReport extends Schema.Class<GroundingReport>("GroundingReport")({
  /**
   * The workspace whose connected repository the answer was grounded in (the request's, else the
   * caller's personal one): where its references' files are read
   * (`GET /v1/workspaces/{id}/repository/files`). Absent on answers stored before it was kept.
   */
  workspace_id: Schema.optional(Schema.String),
  mode: Schema.Literal("focused", "deep"),
  reason: Schema.String,
  files_indexed: Schema.Int,
  files_analysed: Schema.Int,
  /** Indexed and analysed files by category. */
  indexed_by_category: CategoryCounts,
  analysed_by_category: CategoryCounts,
  excerpts: Schema.Array(Schema.Struct({ path: Schema.String, start_line: Schema.Int, end_line: Schema.Int, why: Schema.String })),
  /** The verified citations of the answer (also the reply's `references`). */
  references: Schema.Array(Schema.Struct({ path: Schema.String, start_line: Schema.Int, end_line: Schema.Int, why: Schema.String })),
  /** The answer's `path:line` citations: found, corrected to verified lines or paths, removed. */
  citations: Schema.Struct({ checked: Schema.Int, corrected: Schema.Int, removed: Schema.Int }),
  /** A test-coverage question: every source file counted, those with no linked test listed, all of them. */
  coverage: Schema.optional(Schema.Struct({
    source_files: Schema.Int,
    tested: Schema.Int,
    untested: Schema.Array(Schema.String)
  }))
}) {}
