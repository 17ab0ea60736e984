/**
 * The hand-written part of the grounding evaluation, for one pinned package: index it with the
 * real indexer, rank files for each of its questions with the real retrieval (`rankFiles`),
 * search each question as the grounding service does (its mode's budget) and check the citations
 * of an answer built on the excerpts (`CitationCheck`), and compare deep inspection's coverage
 * with the hand-read truth (`CoverageCheck`).
 */
import * as Indexer from "@huddle/adapters/grounding/Indexer"
import * as LexicalIndex from "@huddle/adapters/grounding/LexicalIndex"
import { coverage, modeOf } from "@huddle/domain/grounding/DeepInspection"
import { budgets } from "@huddle/domain/grounding/Grounding"
import * as CitationCheck from "./CitationCheck.js"
import * as CoverageCheck from "./CoverageCheck.js"
import type { Truth } from "./CoverageTruth.js"
import type { Question } from "./HandWritten.js"
import { firstHit } from "./Ranking.js"

/** The context window the excerpts' budget is a share of: a common small model's. */
export const contextWindow = 32_000

export interface Answered {
  readonly question: Question
  readonly rank: number | undefined
  readonly top: ReadonlyArray<string>
  readonly citations: CitationCheck.Outcome
}

export interface Result {
  readonly pkg: string
  readonly files: { readonly indexed: number; readonly skipped: number; readonly source: number; readonly test: number }
  readonly indexMillis: number
  readonly answered: ReadonlyArray<Answered>
  /** Against the hand-read truth, for the packages that have one. */
  readonly coverage: CoverageCheck.Counts | undefined
}

export const evaluate = async (pkg: string, root: string, questions: ReadonlyArray<Question>, truth: Truth | undefined): Promise<Result> => {
  const started = performance.now()
  const { snapshot } = await Indexer.indexRepository(root, { useGit: false })
  const indexMillis = performance.now() - started
  const index = LexicalIndex.build(snapshot)
  const files = snapshot.files.map((file) => ({ path: file.path, lines: file.lines }))
  const answered = questions.map((question): Answered => {
    const ranked = LexicalIndex.rankFiles(index, question.question)
    const budget = budgets[modeOf(question.question).mode]
    const found = LexicalIndex.search(index, question.question, { budgetTokens: Math.floor(contextWindow * budget.share), maxFiles: budget.maxFiles })
    return {
      question,
      rank: firstHit(ranked, question.expected),
      top: ranked.slice(0, 10),
      citations: CitationCheck.check(root, found.excerpts, files)
    }
  })
  const count = (category: string) => snapshot.files.filter((file) => file.category === category).length
  return {
    pkg,
    files: { indexed: snapshot.files.length, skipped: snapshot.skipped.length, source: count("source"), test: count("test") },
    indexMillis,
    answered,
    coverage: truth === undefined ? undefined : CoverageCheck.compare(coverage(snapshot), truth)
  }
}
