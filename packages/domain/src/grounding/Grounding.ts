/**
 * Grounding a question in the workspace's connected repository (DESIGN §4 "Code grounding"):
 * the mode (focused, or deep for questions about the codebase as a whole), the excerpts chosen
 * within a budget, the instructions that put them in front of the model and ask for `path:line`
 * citations, and what citations are checked against afterwards (`Citations`).
 *
 * ```ts
 * const grounded = yield* grounding.ground({ userId, workspaceId, personal, question, contextWindow })
 * // Option.some({ instructions, citable, report, … }) when a repository is connected and indexed
 * ```
 */
import { Context, Effect, Layer, Option } from "effect"
import { WorkspaceRepository } from "../accounts/WorkspaceRepository.js"
import type { Context as CitableContext, Report as CitationReport } from "./Citations.js"
import { CodeSearch, type Excerpt } from "./CodeSearch.js"
import { coverage as coverageOf, modeOf } from "./DeepInspection.js"
import { GroundingReport } from "./GroundingReport.js"
import { RepositoryStore } from "./RepositoryStore.js"
import type { FileCategory } from "./Snapshot.js"
import * as Instruments from "../observability/Instruments.js"
import * as Metrics from "../observability/Metrics.js"
import * as Traced from "../observability/Traced.js"

export interface Grounded {
  /** The repository and index version the excerpts came from. */
  readonly repositoryId: string
  readonly version: number
  /** The system message that carries the excerpts (and, for coverage, the computed list). */
  readonly instructions: string
  readonly excerpts: ReadonlyArray<Excerpt>
  /** What the answer's citations are verified against. */
  readonly citable: CitableContext
  /** The report, before the answer's citations are counted (`withCitations`). */
  readonly report: GroundingReport
}

export interface Service {
  /** None when the workspace has no repository, or none indexed yet. */
  readonly ground: (request: {
    readonly userId: string
    /** The request's workspace; the user's personal workspace when null (and `personal`). */
    readonly workspaceId: string | null
    /** Whether the user's personal context counts (`RequestScope.personal`): false for a key bound to an org. */
    readonly personal: boolean
    readonly question: string
    /** The smallest context window of the models that will answer: the excerpts take a share of it. */
    readonly contextWindow: number
  }) => Effect.Effect<Option.Option<Grounded>>
  /**
   * What citations are checked against for excerpts chosen earlier (a plan approved later): the
   * repository's files as stored now, and those excerpts.
   */
  readonly citable: (
    repositoryId: string,
    version: number,
    excerpts: CitableContext["excerpts"]
  ) => Effect.Effect<CitableContext>
}

export class Grounding extends Context.Tag("@huddle/domain/Grounding")<Grounding, Service>() {}

/** Shares of the context window, and files, for each mode: deep inspection reads much more. */
export const budgets = {
  focused: { share: 0.2, maxFiles: 8 },
  deep: { share: 0.45, maxFiles: 80 }
} as const

/** The most untested files listed to the model (the report always has all of them). */
const listedUntested = 400

/** Where a reply's complete list of untested files is, for an answer that cannot hold it all. */
export const completeUntestedList = "the reply's grounding.coverage.untested (also on JSON-RPC intent.get of its intent_id)"

/** The line that stands for `count` untested files left out of a list, and says where they all are. */
export const moreUntested = (count: number): string =>
  `untested: … and ${count} more, not listed here: the complete list is in ${completeUntestedList}`

/** How many files a `moreUntested` line stands for; `undefined` for any other line. */
export const moreUntestedCount = (line: string): number | undefined => {
  const match = /^untested: … and (\d+) more, not listed here/.exec(line)
  return match === null ? undefined : Number(match[1])
}

/**
 * The report with the answer's verified citations as references: each says why its passage was
 * retrieved (the excerpt it lies in), and what verification changed, if anything.
 */
export const withCitations = (report: GroundingReport, citations: CitationReport): GroundingReport =>
  new GroundingReport({
    ...report,
    references: citations.references.map((reference) => {
      const excerpt = report.excerpts.find((e) =>
        e.path === reference.path && e.start_line <= reference.end_line && reference.start_line <= e.end_line
      )
      const retrieved = excerpt === undefined ? undefined : `retrieved: ${excerpt.why}`
      const why = reference.why === "as cited" ? retrieved ?? "cited" : retrieved === undefined ? reference.why : `${retrieved}; ${reference.why}`
      return { ...reference, why }
    }),
    citations: { checked: citations.checked, corrected: citations.corrected, removed: citations.removed }
  })

const counts = (paths: Iterable<string>, categoryOf: (path: string) => FileCategory | undefined) => {
  const out: Record<FileCategory, number> = { config: 0, source: 0, test: 0, docs: 0 }
  for (const path of paths) {
    const category = categoryOf(path)
    if (category !== undefined) out[category] += 1
  }
  return out
}

export const make = Effect.gen(function*() {
  const store = yield* RepositoryStore
  const search = yield* CodeSearch
  const workspaces = yield* WorkspaceRepository
  const metrics = yield* Metrics.Metrics

  const ground: Service["ground"] = (request) =>
    Effect.gen(function*() {
      const workspaceId = request.workspaceId ?? (request.personal
        ? Option.getOrUndefined(Option.map(yield* workspaces.findPersonal(request.userId), (w) => w.id))
        : undefined)
      if (workspaceId === undefined) return Option.none()
      const connection = yield* store.find(workspaceId)
      if (Option.isNone(connection) || connection.value.index_version === 0) return Option.none()
      const searchable = yield* search.open(connection.value.id, connection.value.index_version)
      if (Option.isNone(searchable)) return Option.none()
      const { snapshot } = searchable.value

      const mode = modeOf(request.question)
      const budget = budgets[mode.mode]
      const found = yield* Effect.sync(() => {
        const started = performance.now()
        const found = searchable.value.search(request.question, {
          budgetTokens: Math.floor(request.contextWindow * budget.share),
          maxFiles: budget.maxFiles
        })
        metrics.observe(Instruments.retrievalDuration, { depth: mode.mode }, (performance.now() - started) / 1000)
        return found
      }).pipe((effect) => Traced.span(effect, "Grounding.retrieval", { attributes: { "huddle.depth": mode.mode } }))
      const category = new Map(snapshot.files.map((file) => [file.path, file.category] as const))
      const coverage = mode.mode === "deep" && mode.kind === "coverage" ? coverageOf(snapshot) : undefined
      // Deep coverage analyses every source and test file (the computed list); otherwise the excerpts' files.
      const analysed = coverage !== undefined
        ? snapshot.files.filter((file) => file.category === "source" || file.category === "test").map((file) => file.path)
        : [...new Set(found.excerpts.map((excerpt) => excerpt.path))]

      const lines = [
        "Code from the workspace's connected repository follows. Ground your answer in it, and cite the code you rely on",
        "as path:line or path:start-end (for example src/app.ts:12-30). Cite only lines shown here; say so when the code shown does not answer the question.",
        ...(coverage === undefined ? [] : [
          `Test coverage computed from the whole index (complete, not sampled): ${coverage.sources.length} source files, ` +
          `${coverage.tested} linked to at least one test, ${coverage.untested.length} with none.`,
          `List every untested file. If your answer cannot hold them all, say how many you left out and that the complete list is in ${completeUntestedList}.`,
          ...coverage.untested.slice(0, listedUntested).map((path) => `untested: ${path}`),
          ...(coverage.untested.length > listedUntested ? [moreUntested(coverage.untested.length - listedUntested)] : [])
        ]),
        ...found.excerpts.map((excerpt) => `--- ${excerpt.path}:${excerpt.start_line}-${excerpt.end_line} (${excerpt.why}) ---\n${excerpt.text}`)
      ]
      const report = new GroundingReport({
        workspace_id: workspaceId,
        mode: mode.mode,
        reason: mode.reason,
        files_indexed: snapshot.files.length,
        files_analysed: analysed.length,
        indexed_by_category: counts(category.keys(), (path) => category.get(path)),
        analysed_by_category: counts(analysed, (path) => category.get(path)),
        excerpts: found.excerpts.map(({ end_line, path, start_line, why }) => ({ path, start_line, end_line, why })),
        references: [],
        citations: { checked: 0, corrected: 0, removed: 0 },
        ...(coverage === undefined ? {} : {
          coverage: { source_files: coverage.sources.length, tested: coverage.tested, untested: coverage.untested }
        })
      })
      return Option.some({
        repositoryId: connection.value.id,
        version: connection.value.index_version,
        instructions: lines.join("\n"),
        excerpts: found.excerpts,
        citable: { files: snapshot.files.map((file) => ({ path: file.path, lines: file.lines })), excerpts: found.excerpts },
        report
      })
    })

  const citable: Service["citable"] = (repositoryId, version, excerpts) =>
    Effect.map(search.open(repositoryId, version), (searchable) => ({
      files: Option.match(searchable, {
        onNone: () => [],
        onSome: ({ snapshot }) => snapshot.files.map((file) => ({ path: file.path, lines: file.lines }))
      }),
      excerpts
    }))

  return Grounding.of(Traced.traced("Grounding", { ground, citable }))
})

export const layer = Layer.effect(Grounding, make)
