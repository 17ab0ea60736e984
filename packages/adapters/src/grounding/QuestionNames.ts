/**
 * What a question names: files (a path, a file name, a folder, a name only a few files are called)
 * and definitions (`parseArgs`, "parse args"), each with the boost it earns in the ranking.
 */
import type { Definition } from "@huddle/domain/grounding/Snapshot"
import * as CodeTokens from "./CodeTokens.js"
import type { Index } from "./LexicalIndex.js"
import { normalise } from "./LexicalKeys.js"

const NAMED_PATH = 2.5
const NAMED_NAME = 1.5
const DEFINES_CODE = 3
const DEFINES_WORD = 1.8

export interface Named {
  /** Boost per file, and the reason shown. */
  readonly files: Map<string, { readonly boost: number; readonly why: string }>
  /** Boost per definition named. */
  readonly definitions: Array<{ readonly definition: Definition; readonly boost: number }>
}

/** A token that looks like a path or a file name: has a `/`, or ends in `.ext`. */
const PATH_LIKE = /^(?:\.{0,2}\/)?[\w@+~.-]*[\w@+~-](?:\/[\w@+~.-]+)*(?:\.[A-Za-z][A-Za-z0-9]{0,7})?$/
const isPathLike = (token: string): boolean =>
  PATH_LIKE.test(token) && (token.includes("/") || /[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(token))

const rawTokens = (question: string): Array<{ readonly text: string; readonly code: boolean }> => {
  const out: Array<{ text: string; code: boolean }> = []
  const quoted = new Set<string>()
  for (const m of question.matchAll(/`([^`]+)`/g)) for (const part of m[1]!.split(/\s+/)) quoted.add(part)
  for (const piece of question.split(/[\s`'"()[\]{}<>,;!?]+/)) {
    // A trailing period ends the sentence; a `:12` or `#L12` is a line, not part of the name.
    const text = piece.replace(/[.:]+$/, "").replace(/(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$/, "")
    if (text.length === 0) continue
    const code = quoted.has(piece) || quoted.has(text) || /[a-z][A-Z]|_|\w\(|[A-Za-z]\d/.test(text) || question.includes(`${text}(`)
    out.push({ text, code })
  }
  return out
}

export const named = (index: Index, question: string): Named => {
  const files = new Map<string, { boost: number; why: string }>()
  const name = (path: string, boost: number, why: string) => {
    const had = files.get(path)
    if (had === undefined || had.boost < boost) files.set(path, { boost, why })
  }
  const raw = rawTokens(question)
  for (const { text } of raw) {
    if (!isPathLike(text)) continue
    const path = text.replace(/^\.?\//, "")
    if (index.files.has(path)) {
      name(path, NAMED_PATH, "named in the question")
      continue
    }
    const lower = path.toLowerCase()
    const matches = path.includes("/")
      ? [...index.files.keys()].filter((p) => p.toLowerCase().endsWith(`/${lower}`))
      : index.byName.get(lower) ?? []
    if (matches.length > 0 && matches.length <= 5) {
      for (const p of matches) name(p, NAMED_PATH, "named in the question")
      continue
    }
    // A folder: its files, mildly (the question is about that area, not one file).
    const folder = [...index.files.keys()].filter((p) => p.startsWith(`${path}/`) || p.includes(`/${path}/`))
    if (folder.length > 0 && folder.length <= 200) for (const p of folder) name(p, NAMED_NAME, `in ${path}/, which the question names`)
  }

  // Names: single words and adjacent pairs/triples joined ("auth middleware" → AuthMiddleware.ts).
  // `Router.pick` names `Router` and `pick`.
  const words = raw.flatMap((t) => t.text.split(/[./:#]+/).filter((part) => /^[\w$-]+$/.test(part)).map((part) => ({ text: part, code: t.code })))
  const candidates: Array<{ key: string; code: boolean; joined: boolean }> = []
  for (let i = 0; i < words.length; i++) {
    candidates.push({ key: normalise(words[i]!.text), code: words[i]!.code, joined: false })
    for (let n = 2; n <= 3 && i + n <= words.length; n++) {
      candidates.push({ key: normalise(words.slice(i, i + n).map((w) => w.text).join("")), code: false, joined: true })
    }
  }
  const definitions: Array<{ definition: Definition; boost: number }> = []
  const seen = new Set<string>()
  for (const { key, code, joined } of candidates) {
    if (key.length < 3 || CodeTokens.stopwords.has(key) || CodeTokens.questionStopwords.has(key) || seen.has(key)) continue
    seen.add(key)
    const stemFiles = index.byStem.get(key)
    if (stemFiles !== undefined && stemFiles.length <= 3 && (code || joined || key.length >= 4)) {
      for (const p of stemFiles) name(p, NAMED_NAME, "its name is in the question")
    }
    const defs = index.definitions.get(key)
    if (defs === undefined) continue
    // A code-shaped name is meant; a plain word ("config") only when few things are called so.
    if (code && defs.length <= 10) for (const d of defs) definitions.push({ definition: d, boost: DEFINES_CODE })
    else if ((joined || key.length >= 4) && defs.length <= 3) for (const d of defs) definitions.push({ definition: d, boost: DEFINES_WORD })
  }
  return { files, definitions }
}
