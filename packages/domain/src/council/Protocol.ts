/**
 * The council's protocol as the participants see it: the prompt of each round and the reading of
 * each answer. Pure, so that prompts can be checked (no model name in a critique, no vote in a
 * ratification) and answers parsed the same way everywhere (the council, the offline model, the
 * evaluation's simulated participants).
 *
 * Every council prompt starts its instruction with `Council round: <round>`, one line a program
 * can recognise (`roundOf`): one of the four rounds, or `position`, auto mode's cheap second
 * opinion (a position and nothing else; part of the proposals round, not a round of its own). Answers are plain text with labelled lines (`POSITION:`, `CHANGED:`,
 * `REASON:`) or, for the vote, one JSON object: forms every provider can produce without a
 * structured-output feature, read leniently (labels in any case, markdown emphasis, code fences).
 */
import type { ChatMessage } from "../models/Model.js"
import type { CouncilRound } from "./ConsensusReport.js"

/** The line that opens every council instruction. */
export const marker = "Council round:"

/**
 * What a council prompt asks for: a round's answer, or (`position`) auto mode's second opinion,
 * the position alone, asked within the proposals round.
 */
export type PromptRound = CouncilRound | "position"

/**
 * What each seat is asked to weigh first. A panel of copies of one model (a catalog with one
 * model in the tier) then still differs in what it looks at; a mixed panel loses nothing.
 */
export const perspectives: ReadonlyArray<string> = [
  "Answer as an experienced practitioner would: the most direct sound answer.",
  "Look first for what could go wrong: risks, edge cases, hidden costs.",
  "Reason from first principles and check each assumption before relying on it.",
  "Take the view of whoever must maintain and operate the result for years."
]

export const perspectiveOf = (seat: number): string => perspectives[(seat - 1) % perspectives.length]!

/** What a council prompt asks for, from its instruction; undefined for any other request. */
export const roundOf = (messages: ReadonlyArray<ChatMessage>): PromptRound | undefined => {
  for (const message of messages) {
    const match = /^Council round: (proposals|position|critique|synthesis|ratification)$/m.exec(message.content)
    if (match !== null) return match[1] as PromptRound
  }
  return undefined
}

/** Anonymous labels of the peers a seat sees: A, B, C… in seat order, itself left out. */
export const peerLabels = (viewer: number, seats: ReadonlyArray<number>): ReadonlyMap<number, string> =>
  new Map(seats.filter((seat) => seat !== viewer).map((seat, i) => [seat, String.fromCharCode(65 + i)]))

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A peer's text with the names that would identify its model (catalog ids, upstream names,
 * providers) replaced, so that critique judges what was said, not who said it.
 */
export const anonymise = (text: string, names: ReadonlyArray<string>): string => {
  const distinct = [...new Set(names.filter((name) => name.trim().length >= 3))].sort((a, b) => b.length - a.length)
  if (distinct.length === 0) return text
  const pattern = new RegExp(`(?<![\\w-])(?:${distinct.map(escapeRegExp).join("|")})(?![\\w-])`, "gi")
  return text.replace(pattern, "another model")
}

/** Cuts a peer's text to what the round's budget planned for (about four characters a token). */
export const clip = (text: string, tokens: number): string => {
  const max = tokens * 4
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

// ---------------------------------------------------------------------------------------------
// Prompts

const instruction = (round: PromptRound, lines: ReadonlyArray<string>): ChatMessage => ({
  role: "system",
  content: [`${marker} ${round}`, ...lines].join("\n")
})

/** Who a seat is when it answers alone: its place in the council and its perspective. */
const independent = (seat: number, size: number): ReadonlyArray<string> => [
  `You are one of ${size} members of a council that answers the question below; the others answer it independently.`,
  `Your perspective: ${perspectiveOf(seat)}`
]

/** Round 1: an independent answer, opening with the position in one sentence. */
export const proposalPrompt = (base: ReadonlyArray<ChatMessage>, seat: number, size: number): ReadonlyArray<ChatMessage> => [
  instruction("proposals", [
    ...independent(seat, size),
    "Begin your reply with one line `POSITION: <your answer in one sentence>`, then give your full answer."
  ]),
  ...base
]

/**
 * Auto mode's second opinion: the same independent question and perspective as a proposal, but
 * only its `POSITION:` line, so that it costs its prompt and a line. It decides whether the
 * first proposal stands alone; on an escalation the seat is asked for its full proposal.
 */
export const positionPrompt = (base: ReadonlyArray<ChatMessage>, seat: number, size: number): ReadonlyArray<ChatMessage> => [
  instruction("position", [
    ...independent(seat, size),
    "Reply with only one line `POSITION: <your answer in one sentence>`: no explanation, nothing before or after it."
  ]),
  ...base
]

export interface PeerText {
  readonly label: string
  readonly text: string
}

const peersBlock = (heading: string, peers: ReadonlyArray<PeerText>): string =>
  [heading, ...peers.map((peer) => `--- Participant ${peer.label} ---\n${peer.text}`)].join("\n\n")

/** Round 2: the seat's own proposal as its earlier turn, then the others', anonymised. */
export const critiquePrompt = (
  base: ReadonlyArray<ChatMessage>,
  seat: number,
  own: string,
  peers: ReadonlyArray<PeerText>
): ReadonlyArray<ChatMessage> => [
  instruction("critique", [
    "You are a member of a council. You proposed an answer; the other members' proposals follow, anonymised.",
    `Your perspective: ${perspectiveOf(seat)}`,
    "Judge them on their merits, not on how many share them: a view held by one member can be the right one.",
    "Reply in this form:",
    "CRITIQUE: <where the others are right or wrong, and why>",
    "POSITION: <your position now, in one sentence>",
    "CHANGED: <yes or no: whether your position changed>",
    "REASON: <why you changed it, or why you kept it>"
  ]),
  ...base,
  { role: "assistant", content: own },
  { role: "user", content: peersBlock("The other members' proposals:", peers) }
]

export interface Revised {
  /** `Participant A`…, or `Your own` for the chair's own work. */
  readonly label: string
  /** The position of its proposal, given before it saw anyone else's. */
  readonly first: string
  /** Its position after the critique (its first one when it did not critique). */
  readonly position: string
  readonly answer: string
  readonly critique: string
}

/**
 * Round 3: the chair sees every member's proposal and critique (its own among them, unnamed),
 * and each member's first position beside its position now: an answer given up under the
 * others' pressure in the critique is still in front of the chair.
 */
export const synthesisPrompt = (base: ReadonlyArray<ChatMessage>, members: ReadonlyArray<Revised>): ReadonlyArray<ChatMessage> => [
  instruction("synthesis", [
    "You chair a council of which you are a member. The members answered the question independently, then critiqued each other; their work follows, anonymised, yours marked as your own.",
    "Each member's first position is the one it reached alone; its position now is the one it holds after reading the others.",
    "Write the council's consensus answer: what the members agree on, and a reasoned choice where they differ.",
    "Weigh arguments, not numbers: adopt a minority view when its reasoning is better, also a first position its member gave up once it saw the others.",
    "Do not hide disagreement: where a member holds a view you do not adopt, say so.",
    "Begin your reply with one line `POSITION: <the consensus in one sentence>`, then the consensus answer."
  ]),
  ...base,
  {
    role: "user",
    content: members.map((member) =>
      `--- ${member.label} ---\nFirst position: ${member.first}\nPosition now: ${member.position}\n${member.answer}\n` +
      `CRITIQUE OF THE OTHERS: ${member.critique}`
    ).join("\n\n")
  }
]

/** Round 4: the consensus and the seat's own positions; never anyone else's vote. */
export const ratificationPrompt = (
  base: ReadonlyArray<ChatMessage>,
  seat: number,
  own: { readonly initial: string | null; readonly final: string | null },
  consensus: { readonly position: string; readonly text: string }
): ReadonlyArray<ChatMessage> => [
  instruction("ratification", [
    "You are a member of a council. The chair wrote the consensus below. Decide alone whether you endorse it;",
    "the other members decide without seeing your vote, and you do not see theirs.",
    `Your perspective: ${perspectiveOf(seat)}`,
    ...(own.initial === null ? [] : [`Your first position: ${own.initial}`]),
    ...(own.final === null ? [] : [`Your position after the critique: ${own.final}`]),
    "If you still hold a view the consensus does not, dissent: a dissent is kept in the council's report.",
    "Reply with only one JSON object:",
    "{\"vote\": \"endorse\" or \"dissent\", \"claim\": \"<if you dissent: what you hold instead, in one sentence>\", \"rationale\": \"<why>\"}"
  ]),
  ...base,
  { role: "user", content: `The council's consensus:\nPOSITION: ${consensus.position}\n${consensus.text}` }
]

/** What a participant is told when its answer could not be read, for its one retry. */
export const retryNote = (round: PromptRound): ChatMessage => ({
  role: "user",
  content: round === "ratification"
    ? "Your reply could not be read. Reply with only the JSON object, as asked."
    : round === "position"
    ? "Your reply could not be read. Reply with only the `POSITION:` line, as asked."
    : "Your reply could not be read. Use the labelled lines exactly as asked."
})

// ---------------------------------------------------------------------------------------------
// Answers

/** Removes markdown emphasis and list markers around a label line. */
const cleanLine = (line: string) => line.trim().replace(/^[-*>#\s]+/, "").replace(/\*\*|__/g, "").trim()

/** The value of the first line labelled `label` (in any case), or undefined. */
export const labelled = (text: string, label: string): string | undefined => {
  for (const raw of text.split(/\r?\n/)) {
    const line = cleanLine(raw)
    const match = new RegExp(`^${label}\\s*[:：-]\\s*(.*)$`, "i").exec(line)
    if (match !== null && match[1]!.trim().length > 0) return match[1]!.trim()
  }
  return undefined
}

/** Everything but the lines labelled with one of `labels`. */
const without = (text: string, labels: ReadonlyArray<string>): string =>
  text.split(/\r?\n/)
    .filter((raw) => !labels.some((label) => new RegExp(`^${label}\\s*[:：-]`, "i").test(cleanLine(raw))))
    .join("\n")
    .trim()

const firstSentence = (text: string): string => {
  const line = text.trim().split(/\r?\n/).find((l) => l.trim().length > 0) ?? ""
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line.trim())
  const out = (sentence?.[1] ?? line).trim()
  return out.length > 200 ? `${out.slice(0, 199)}…` : out
}

export interface Stated {
  readonly position: string
  readonly text: string
}

/**
 * A proposal or a synthesis: its `POSITION:` line and the rest. Without the line, the first
 * sentence stands for the position (a model that forgot the form still answered); an empty
 * answer is unreadable.
 */
export const parseStated = (text: string): Stated | undefined => {
  if (text.trim().length === 0) return undefined
  const position = labelled(text, "POSITION")
  const rest = without(text, ["POSITION"])
  if (position !== undefined) return { position, text: rest.length > 0 ? rest : position }
  return { position: firstSentence(text), text: text.trim() }
}

export interface Critique {
  readonly critique: string
  readonly position: string
  /** As the participant said it; undefined when it did not say (the council then compares positions). */
  readonly changed: boolean | undefined
  readonly reason: string | undefined
}

/** A critique needs its `POSITION:` line: that is what the round is for. */
export const parseCritique = (text: string): Critique | undefined => {
  const position = labelled(text, "POSITION")
  if (position === undefined) return undefined
  const changed = labelled(text, "CHANGED")
  const critique = labelled(text, "CRITIQUE") ?? without(text, ["POSITION", "CHANGED", "REASON"])
  return {
    critique,
    position,
    changed: changed === undefined ? undefined : /^(yes|y|true|changed)\b/i.test(changed),
    reason: labelled(text, "REASON")
  }
}

export interface Ballot {
  readonly vote: "endorse" | "dissent"
  readonly claim: string | undefined
  readonly rationale: string
}

/** The first balanced `{…}` of a text (inside a code fence or not), parsed; undefined if none parses. */
export const firstJsonObject = (text: string): unknown => {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    let depth = 0
    let inString = false
    for (let i = start; i < text.length; i++) {
      const c = text[i]
      if (inString) {
        if (c === "\\") i++
        else if (c === "\"") inString = false
      } else if (c === "\"") inString = true
      else if (c === "{") depth++
      else if (c === "}" && --depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1))
        } catch {
          break
        }
      }
    }
  }
  return undefined
}

const voteOf = (value: unknown): Ballot["vote"] | undefined => {
  if (typeof value !== "string") return undefined
  const v = value.trim().toLowerCase()
  if (/^(endorse|endorsed|endorsement|agree|agreed|accept|yes|approve)$/.test(v)) return "endorse"
  if (/^(dissent|dissented|disagree|disagreed|reject|rejected|no|oppose)$/.test(v)) return "dissent"
  return undefined
}

const stringOf = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim().length > 0 ? value.trim() : undefined

/** A vote: the JSON object asked for, else `VOTE:`/`CLAIM:`/`RATIONALE:` lines; undefined if neither reads. */
export const parseBallot = (text: string): Ballot | undefined => {
  const json = firstJsonObject(text)
  if (typeof json === "object" && json !== null) {
    const record = json as Record<string, unknown>
    const vote = voteOf(record.vote ?? record.decision)
    if (vote !== undefined) {
      return { vote, claim: stringOf(record.claim), rationale: stringOf(record.rationale) ?? stringOf(record.reason) ?? "" }
    }
  }
  const vote = voteOf(labelled(text, "VOTE"))
  if (vote === undefined) return undefined
  return { vote, claim: labelled(text, "CLAIM"), rationale: labelled(text, "RATIONALE") ?? labelled(text, "REASON") ?? "" }
}

// ---------------------------------------------------------------------------------------------
// Positions

const stopWords = new Set([
  "a", "an", "the", "is", "are", "be", "it", "its", "of", "to", "in", "on", "for", "and", "or", "we", "you", "i",
  "should", "would", "use", "answer", "that", "this", "with", "as", "by", "at", "so", "because", "position"
])

/** The content words of a position, lower case, without punctuation. */
export const wordsOf = (position: string): ReadonlySet<string> =>
  new Set(
    position.toLowerCase().normalize("NFKD").replace(/[^\p{L}\p{N}\s]/gu, " ").split(/\s+/)
      .filter((word) => word.length > 0 && !stopWords.has(word))
  )

/**
 * Whether two positions say the same: equal content words, or nearly (Jaccard ≥ 0.75). It errs
 * towards "different": where it is used (auto mode's second opinion), a false difference costs a
 * council, a false agreement an answer nobody checked.
 */
export const samePosition = (a: string, b: string): boolean => {
  const x = wordsOf(a)
  const y = wordsOf(b)
  if (x.size === 0 || y.size === 0) return x.size === y.size
  let shared = 0
  for (const word of x) if (y.has(word)) shared++
  return shared / (x.size + y.size - shared) >= 0.75
}
