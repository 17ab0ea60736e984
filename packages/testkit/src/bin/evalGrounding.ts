/**
 * `npm run eval:grounding`: code grounding measured on real code. Hand-written questions over
 * pinned npm packages (fetched once with `npm pack`, checked against their integrity hashes,
 * cached): retrieval's recall@5, recall@10 and MRR, the validity of the citations left in a
 * verified answer, and deep inspection's test coverage against a hand-read truth. Then questions
 * from this repository's history (commit subjects, answered by the files the commit changed),
 * asked of the repository as it was before each commit. See docs/evals.md.
 *
 *   node packages/testkit/dist/bin/evalGrounding.js [--cache DIR] [--commits N] [--until REV] [--repo DIR] [--no-history] [--verbose]
 */
import { join } from "node:path"
import * as CoverageCheck from "../evals/grounding/CoverageCheck.js"
import { truths } from "../evals/grounding/CoverageTruth.js"
import { questions, type Style } from "../evals/grounding/HandWritten.js"
import * as History from "../evals/grounding/History.js"
import * as PackageEval from "../evals/grounding/PackageEval.js"
import * as Packages from "../evals/grounding/Packages.js"
import { summarise } from "../evals/grounding/Ranking.js"
import { table } from "../evals/Report.js"

const usage = "usage: eval:grounding [--cache DIR] [--commits N] [--until REV] [--repo DIR] [--no-history] [--verbose]"

const refuse = (message: string): never => {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

const parse = (argv: ReadonlyArray<string>) => {
  const options = {
    cache: undefined as string | undefined,
    commits: 60,
    until: "HEAD",
    repo: process.cwd(),
    history: true,
    verbose: false
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const value = () => argv[++i] ?? refuse(`${flag} needs a value`)
    switch (flag) {
      case "--cache":
        options.cache = value()
        break
      case "--commits": {
        const n = Number(value())
        options.commits = Number.isSafeInteger(n) && n > 0 ? n : refuse("--commits must be a positive integer")
        break
      }
      case "--until":
        options.until = value()
        break
      case "--repo":
        options.repo = value()
        break
      case "--no-history":
        options.history = false
        break
      case "--verbose":
        options.verbose = true
        break
      case "--help":
      case "-h":
        console.log(usage)
        process.exit(0)
        break
      default:
        refuse(`unknown option ${flag}`)
    }
  }
  return options
}

const options = parse(process.argv.slice(2))
const styles: ReadonlyArray<Style> = ["identifier", "natural"]
const fixed = (x: number, digits = 3) => (Number.isNaN(x) ? "n/a" : x.toFixed(digits))
const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

const styled = (answered: ReadonlyArray<PackageEval.Answered>, style: Style) => answered.filter((a) => a.question.style === style)

/** Retrieval over the hand-written questions: per package, per style, and the questions whose first file is not an expected one. */
const reportRetrieval = (results: ReadonlyArray<PackageEval.Result>, verbose: boolean) => {
  const all = results.flatMap((r) => r.answered)
  const retrievalRow = (name: string, answered: ReadonlyArray<PackageEval.Answered>) => {
    const s = summarise(answered.map((a) => a.rank))
    return [name, String(s.questions), fixed(s.recallAt5), fixed(s.recallAt10), fixed(s.mrr)]
  }
  console.log("Retrieval, hand-written questions (rankFiles; a hit is any expected file)")
  console.log(table(["package", "questions", "recall@5", "recall@10", "MRR"], [...results.map((r) => retrievalRow(r.pkg, r.answered)), retrievalRow("all", all)]))
  console.log("By style: identifier (names what the code spells) and natural (plain words only)")
  console.log(
    table(
      ["package", "style", "questions", "recall@5", "recall@10", "MRR"],
      [...results.map((r) => ({ name: r.pkg, answered: r.answered })), { name: "all", answered: all }].flatMap(({ answered, name }) =>
        styles.map((style) => {
          const [, ...rest] = retrievalRow(name, styled(answered, style))
          return [name, style, ...rest]
        }))
    )
  )
  const notFirst = all.filter((a) => a.rank !== 1)
  if (notFirst.length > 0) {
    console.log("Questions whose first file is not an expected one (rank of the first expected file; the first three files ranked):")
    for (const a of notFirst) {
      console.log(`  ${a.rank ?? "none"}  [${a.question.pkg}, ${a.question.style}] ${a.question.question}\n       expected ${a.question.expected.join(" | ")}; ranked ${a.top.slice(0, 3).join(", ")}`)
    }
  }
  if (verbose) {
    for (const a of all.filter((x) => x.rank === 1)) console.log(`  1  [${a.question.pkg}] ${a.question.question}`)
  }
  console.log("")
}

/** The citations left in each verified answer, checked on disk. */
const reportCitations = (results: ReadonlyArray<PackageEval.Result>) => {
  const all = results.flatMap((r) => r.answered)
  const citationRow = (name: string, answered: ReadonlyArray<PackageEval.Answered>) => {
    const sum = (pick: (a: PackageEval.Answered) => number) => answered.reduce((n, a) => n + pick(a), 0)
    const output = sum((a) => a.citations.output)
    const valid = sum((a) => a.citations.validInOutput)
    return [
      name,
      String(answered.length),
      String(sum((a) => a.citations.written.valid)),
      String(sum((a) => a.citations.written.invalid)),
      String(output),
      String(valid),
      pct(valid, output),
      `${sum((a) => a.citations.validKept)}/${sum((a) => a.citations.written.valid)}`,
      String(sum((a) => a.citations.invalidKept))
    ]
  }
  console.log("Citations: an answer per question citing its excerpts, plus a missing file, lines past the end, and a misquoted range; Citations.verify, then each output citation checked on disk")
  console.log(
    table(
      ["package", "answers", "correct written", "invalid written", "in output", "valid in output", "validity", "correct kept", "invalid left as written"],
      [...results.map((r) => citationRow(r.pkg, r.answered)), citationRow("all", all)]
    )
  )
  for (const failure of all.flatMap((a) => a.citations.failures.map((f) => `[${a.question.pkg}] ${f}`))) console.log(`  invalid in output: ${failure}`)
  console.log("")
}

/** Deep inspection's coverage against the hand-read truth; the total, for the targets. */
const reportCoverage = (results: ReadonlyArray<PackageEval.Result>): CoverageCheck.Counts => {
  const coverageRow = (name: string, c: CoverageCheck.Counts) => [
    name,
    String(c.tested.both + c.tested.truthOnly),
    String(c.untested.both + c.untested.truthOnly),
    String(c.tested.both + c.tested.coverageOnly),
    String(c.untested.both + c.untested.coverageOnly),
    fixed(CoverageCheck.precision(c.tested)),
    fixed(CoverageCheck.recall(c.tested)),
    fixed(CoverageCheck.precision(c.untested)),
    fixed(CoverageCheck.recall(c.untested))
  ]
  const covered = results.flatMap((r) => (r.coverage === undefined ? [] : [{ pkg: r.pkg, coverage: r.coverage }]))
  const coverageTotal = CoverageCheck.total(covered.map((r) => r.coverage))
  console.log("Test coverage: DeepInspection.coverage against the hand-read truth (source files a test imports)")
  console.log(
    table(
      ["package", "truth tested", "truth untested", "said tested", "said untested", "tested P", "tested R", "untested P", "untested R"],
      [...covered.map((r) => coverageRow(r.pkg, r.coverage)), coverageRow("all", coverageTotal)]
    )
  )
  for (const line of coverageTotal.disagreements) console.log(`  ${line}`)
  console.log("")
  return coverageTotal
}

/** Questions from this repository's history, asked of the repository as it was before each commit. */
const reportHistory = async (options: ReturnType<typeof parse>) => {
  let historySummary: string | undefined
  if (options.history) {
    const top = await History.topLevel(options.repo)
    if (top === undefined) {
      historySummary = `${options.repo} is not a git work tree: no questions from history`
    } else {
      const t0 = Date.now()
      const scan = await History.scan(top, options.until, options.commits)
      const asked = await History.ask(top, scan.commits, (done) => {
        if (process.stderr.isTTY) process.stderr.write(`\rhistory: ${done}/${scan.commits.length}`)
      })
      if (process.stderr.isTTY) process.stderr.write("\r\x1b[K")
      const s = summarise(asked.map((a) => a.rank))
      const truthFiles = asked.reduce((n, a) => n + a.commit.truth.length, 0)
      const foundFiles = asked.reduce((n, a) => n + a.inTop10, 0)
      console.log(
        `Questions from this repository's history: the newest ${scan.commits.length} eligible commits of ${scan.seen} scanned back from ${options.until} ` +
          `(left out: ${scan.merges} merges, ${scan.tooLarge} touching more than 20 files, ${scan.noSource} changing no source file that existed before them); ` +
          "the subject is the question, the changed non-test source files are the answer, retrieval over the parent commit"
      )
      console.log(
        table(
          ["questions", "recall@5", "recall@10", "MRR", "truth files in top 10", "time"],
          [[String(s.questions), fixed(s.recallAt5), fixed(s.recallAt10), fixed(s.mrr), `${foundFiles}/${truthFiles} (${pct(foundFiles, truthFiles)})`, seconds(Date.now() - t0)]]
        )
      )
      if (options.verbose) {
        for (const a of asked) {
          console.log(`  ${String(a.rank ?? "-").padStart(4)}  ${a.commit.sha.slice(0, 7)} ${a.commit.subject.slice(0, 110)}\n        truth ${a.commit.truth.join(", ")}\n        top ${a.top.slice(0, 5).join(", ")}`)
        }
      }
      console.log("")
    }
  }
  if (historySummary !== undefined) console.log(`${historySummary}\n`)
}

/** Each target, passed or missed, and the verdict. */
const reportTargets = (results: ReadonlyArray<PackageEval.Result>, coverageTotal: CoverageCheck.Counts, started: number) => {
  const all = results.flatMap((r) => r.answered)
  const s = summarise(all.map((a) => a.rank))
  const output = all.reduce((n, a) => n + a.citations.output, 0)
  const valid = all.reduce((n, a) => n + a.citations.validInOutput, 0)
  // Retrieval's targets hold on every package, not only on the total: a package where it fails is a
  // kind of repository it fails on.
  const perPackage = results.flatMap((r) => {
    const p = summarise(r.answered.map((a) => a.rank))
    const n = summarise(styled(r.answered, "natural").map((a) => a.rank))
    return [
      { name: `${r.pkg}: recall@10 >= 0.9`, pass: p.recallAt10 >= 0.9, value: fixed(p.recallAt10) },
      { name: `${r.pkg}: MRR >= 0.7`, pass: p.mrr >= 0.7, value: fixed(p.mrr) },
      { name: `${r.pkg}: natural-language MRR >= 0.6`, pass: n.mrr >= 0.6, value: fixed(n.mrr) }
    ]
  })
  const targets = [
    { name: "hand-written recall@10 >= 0.9", pass: s.recallAt10 >= 0.9, value: fixed(s.recallAt10) },
    { name: "hand-written MRR >= 0.7", pass: s.mrr >= 0.7, value: fixed(s.mrr) },
    ...perPackage,
    { name: "citation validity = 100%", pass: output > 0 && valid === output, value: `${valid}/${output}` },
    { name: "coverage: tested precision >= 0.95", pass: CoverageCheck.precision(coverageTotal.tested) >= 0.95, value: fixed(CoverageCheck.precision(coverageTotal.tested)) },
    { name: "coverage: tested recall >= 0.95", pass: CoverageCheck.recall(coverageTotal.tested) >= 0.95, value: fixed(CoverageCheck.recall(coverageTotal.tested)) },
    { name: "coverage: untested precision >= 0.95", pass: CoverageCheck.precision(coverageTotal.untested) >= 0.95, value: fixed(CoverageCheck.precision(coverageTotal.untested)) },
    { name: "coverage: untested recall >= 0.95", pass: CoverageCheck.recall(coverageTotal.untested) >= 0.95, value: fixed(CoverageCheck.recall(coverageTotal.untested)) }
  ]
  for (const t of targets) console.log(`${t.pass ? "PASS" : "FAIL"}  ${t.name}: ${t.value}`)
  const passed = targets.filter((t) => t.pass).length
  console.log(`${passed === targets.length ? "ALL TARGETS MET" : "TARGETS MISSED"}: ${passed} of ${targets.length} (${seconds(Date.now() - started)})`)
}

const main = async () => {
  const started = Date.now()
  const repo = (await History.topLevel(options.repo)) ?? options.repo
  const cacheDir = options.cache ?? join(repo, ".huddle", "evals", "grounding")
  console.log("Grounding evaluation: the real indexer, retrieval (LexicalIndex.rankFiles/search), Citations.verify and DeepInspection.coverage")
  console.log(`Packages (cache: ${cacheDir}):`)

  const results: Array<PackageEval.Result> = []
  for (const pin of Packages.pinned) {
    const { cached, root } = await Packages.ready(pin, cacheDir)
    // Coverage is checked where its truth was read by hand (the first three packages).
    const truth = truths.find((t) => t.pkg === pin.name)
    const result = await PackageEval.evaluate(pin.name, root, questions.filter((q) => q.pkg === pin.name), truth)
    results.push(result)
    console.log(
      `  ${pin.name}@${pin.version} (${cached ? "cached" : "fetched"}, integrity checked): ${result.files.indexed} files indexed ` +
        `(${result.files.source} source, ${result.files.test} test), ${result.files.skipped} skipped, indexed in ${seconds(result.indexMillis)}; ${pin.about}`
    )
  }
  console.log("")
  reportRetrieval(results, options.verbose)
  reportCitations(results)
  const coverageTotal = reportCoverage(results)
  await reportHistory(options)
  reportTargets(results, coverageTotal, started)
}

main().catch((error: unknown) => {
  console.error(error instanceof Packages.PackageUnavailable ? `eval:grounding: ${error.message}` : error)
  process.exitCode = 1
})
