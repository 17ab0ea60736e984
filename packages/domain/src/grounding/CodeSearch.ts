/**
 * The port that searches a stored snapshot: an adapter builds a lexical index from it and keeps
 * it while its version is current, so that a request does not rebuild what the last one built.
 */
import { Context, type Effect, type Option } from "effect"
import type { Snapshot } from "./Snapshot.js"

export interface Excerpt {
  readonly path: string
  readonly start_line: number
  readonly end_line: number
  readonly text: string
  /** Why it was chosen ("names `parseArgs`; matches: retry, backoff"). */
  readonly why: string
}

export interface Searchable {
  readonly snapshot: Snapshot
  /** The best excerpts for `question` within `budgetTokens`, from at most `maxFiles` files. */
  readonly search: (
    question: string,
    options: { readonly budgetTokens: number; readonly maxFiles: number }
  ) => { readonly excerpts: ReadonlyArray<Excerpt>; readonly files: ReadonlyArray<string> }
}

export interface Service {
  /** The repository's snapshot at `version`, ready to search; none when nothing is stored. */
  readonly open: (repositoryId: string, version: number) => Effect.Effect<Option.Option<Searchable>>
}

export class CodeSearch extends Context.Tag("@huddle/domain/CodeSearch")<CodeSearch, Service>() {}
