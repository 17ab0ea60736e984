/**
 * Questions from a repository's own history: each commit's subject is the question, and the
 * non-test source files it changed that existed before it (modified, deleted or renamed away) are
 * the files that answer it. Retrieval runs over the repository as it was at the commit's parent,
 * extracted with `git archive` into a temporary directory (the work tree and its git state are
 * never touched). Merges, the root commit and commits touching more than `maxTouched` files are
 * left out, as are commits that changed no source file that existed before them.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Indexer from "@huddle/adapters/grounding/Indexer"
import * as LexicalIndex from "@huddle/adapters/grounding/LexicalIndex"
import type { Snapshot } from "@huddle/domain/grounding/Snapshot"
import { firstHit } from "./Ranking.js"

export interface Commit {
  readonly sha: string
  readonly parent: string
  readonly subject: string
  /** Changed non-test source files present at the parent. */
  readonly truth: ReadonlyArray<string>
  readonly touched: number
}

export interface Scan {
  readonly commits: ReadonlyArray<Commit>
  readonly seen: number
  readonly merges: number
  readonly tooLarge: number
  readonly noSource: number
}

export interface Asked {
  readonly commit: Commit
  /** Rank of the first truth file, and how many truth files are in the first ten. */
  readonly rank: number | undefined
  readonly inTop10: number
  readonly top: ReadonlyArray<string>
}

/** A changed file counts when it is code and not a test. */
export const isSource = (path: string): boolean =>
  /\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(path) && !path.endsWith(".d.ts") &&
  !/(?:^|\/)(?:test|tests|__tests__|spec)\//.test(path) && !/\.(?:test|spec)\.[a-z]+$/.test(path)

const git = (repo: string, args: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) =>
    execFile("git", args, { cwd: repo, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) =>
      error ? reject(new Error(`git ${args.join(" ")}: ${stderr.trim() || error.message}`)) : resolve(stdout)))

/** The repository's top directory, or undefined when `dir` is not in a git work tree. */
export const topLevel = async (dir: string): Promise<string | undefined> => {
  try {
    return (await git(dir, ["rev-parse", "--show-toplevel"])).trim()
  } catch {
    return undefined
  }
}

/** The newest `limit` eligible commits of `until`'s history (itself included), oldest first. */
export const scan = async (repo: string, until: string, limit: number, maxTouched = 20): Promise<Scan> => {
  const log = await git(repo, ["log", "--format=%x1e%H%x1f%P%x1f%s", "--name-status", "--end-of-options", until])
  const commits: Array<Commit> = []
  let seen = 0
  let merges = 0
  let tooLarge = 0
  let noSource = 0
  for (const record of log.split("\x1e").slice(1)) {
    if (commits.length >= limit) break
    const [head = "", ...body] = record.split("\n")
    const [sha = "", parents = "", subject = ""] = head.split("\x1f")
    seen += 1
    const parentList = parents.split(" ").filter((p) => p !== "")
    if (parentList.length > 1) {
      merges += 1
      continue
    }
    if (parentList.length === 0) continue
    const changes = body.filter((line) => line.trim() !== "").map((line) => line.split("\t"))
    if (changes.length > maxTouched) {
      tooLarge += 1
      continue
    }
    // Modified, deleted, type-changed: the path; renamed or copied: the old path. Added files did not exist yet.
    const before = changes.flatMap(([status = "", path = ""]) => (/^[MDTRC]/.test(status) ? [path] : []))
    const truth = [...new Set(before.filter(isSource))].sort()
    if (truth.length === 0) {
      noSource += 1
      continue
    }
    commits.push({ sha, parent: parentList[0]!, subject, truth, touched: changes.length })
  }
  return { commits: commits.reverse(), seen, merges, tooLarge, noSource }
}

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve, reject) => {
    child.on("error", reject)
    child.on("close", resolve)
  })

/** `git archive` of `commit` extracted into `dir`. */
const extract = async (repo: string, commit: string, dir: string): Promise<void> => {
  const archive = spawn("git", ["archive", "--format=tar", commit], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] })
  const tar = spawn("tar", ["-x", "-C", dir], { stdio: ["pipe", "ignore", "pipe"] })
  let errors = ""
  archive.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()))
  tar.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()))
  archive.stdout!.pipe(tar.stdin!)
  const [archived, extracted] = await Promise.all([exited(archive), exited(tar)])
  if (archived !== 0 || extracted !== 0) throw new Error(`git archive ${commit} | tar -x: ${errors.trim() || `exit ${archived}/${extracted}`}`)
}

/**
 * Asks each commit's subject of the repository at its parent. Indexing is incremental from one
 * parent to the next (only files whose content changed are parsed again).
 */
export const ask = async (repo: string, commits: ReadonlyArray<Commit>, onProgress?: (done: number) => void): Promise<ReadonlyArray<Asked>> => {
  const asked: Array<Asked> = []
  let previous: Snapshot | undefined
  for (const commit of commits) {
    const dir = mkdtempSync(join(tmpdir(), "huddle-eval-history-"))
    try {
      await extract(repo, commit.parent, dir)
      const { snapshot } = await Indexer.indexRepository(dir, { previous, useGit: false })
      previous = snapshot
      const ranked = LexicalIndex.rankFiles(LexicalIndex.build(snapshot), commit.subject)
      const top = ranked.slice(0, 10)
      asked.push({ commit, rank: firstHit(ranked, commit.truth), inTop10: commit.truth.filter((p) => top.includes(p)).length, top })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    onProgress?.(asked.length)
  }
  return asked
}
