/**
 * How the offline model takes part in a council (`@huddle/domain/council/Protocol`), so that a
 * fresh checkout shows agreement and dissent with no provider. Deterministic, and never passed
 * off as reasoning: every answer says it comes from the offline model and which fixed rule chose.
 *
 * Positions differ only where the question gives them room to:
 * - a question naming options (`PostgreSQL or MySQL`, `A, B or C`, `X vs Y`): seat 1 (the
 *   practitioner) takes the first option named, seat 2 (the risk-minded) the last, the others one
 *   chosen by a hash of their perspective and the question;
 * - a yes/no question (`Should we…?`, `Is…?`): the same rule over `yes` and `no`;
 * - anything else: every seat restates the question the same way, and they agree.
 * Asked for its position alone (auto mode's second opinion), a seat gives the position it would
 * propose, in one line.
 * In the critique each keeps its position; the chair adopts the position most members hold (its
 * own on a tie); each member endorses a consensus that states its position and dissents, with its
 * position as the claim, from one that does not.
 */
import * as Protocol from "@huddle/domain/council/Protocol"
import type { ChatMessage } from "@huddle/domain/models/Model"
import { fnv1a } from "./Fnv1a.js"

const token = String.raw`[\p{L}\p{N}][\p{L}\p{N}.+#_-]*`

/** The options a question names, in order: `X or Y`, `X, Y or Z`, `X vs Y`, `between X and Y`. */
export const optionsOf = (question: string): ReadonlyArray<string> => {
  const list = new RegExp(String.raw`((?:${token},\s*)*${token}),?\s+(?:or|vs\.?|versus)\s+(${token})`, "iu").exec(question)
  if (list !== null) {
    const named = [...list[1]!.split(/,\s*/), list[2]!].map((option) => option.replace(/[.]+$/, ""))
    return [...new Set(named)]
  }
  const between = new RegExp(String.raw`between\s+(${token})\s+and\s+(${token})`, "iu").exec(question)
  if (between !== null) return [between[1]!, between[2]!.replace(/[.]+$/, "")]
  if (/^\s*(should|shall|is|are|can|could|do|does|did|will|would|must|has|have)\b[^?]*\?\s*$/i.test(question)) return ["yes", "no"]
  return []
}

const seatOf = (messages: ReadonlyArray<ChatMessage>): number => {
  const text = messages.map((message) => message.content).join("\n")
  const found = Protocol.perspectives.findIndex((perspective) => text.includes(`Your perspective: ${perspective}`))
  return found < 0 ? 1 : found + 1
}

/** The member's question: the last user turn of the conversation, before the round's own turn. */
const questionOf = (messages: ReadonlyArray<ChatMessage>, round: string): string => {
  const users = messages.filter((message) => message.role === "user")
  const turn = round === "proposals" || round === "position" ? users.at(-1) : users.at(-2)
  return (turn?.content ?? "").trim().replace(/\s+/g, " ")
}

const positionFor = (question: string, seat: number): { readonly position: string; readonly rule: string } => {
  const options = optionsOf(question)
  if (options.length === 0) {
    return { position: `The question "${question.slice(0, 120)}" has one answer from every perspective.`, rule: "the question names no options" }
  }
  const index = seat === 1 ? 0 : seat === 2 ? options.length - 1 : fnv1a(`${seat}\n${question}`) % options.length
  const choice = options[index]!
  const rule = seat === 1 ? "the option named first" : seat === 2 ? "the option named last" : "an option chosen by a hash of the question"
  const position = choice === "yes" ? "Yes." : choice === "no" ? "No." : `${choice} is the better choice.`
  return { position, rule: `${rule}, among ${options.map((o) => `"${o}"`).join(", ")}` }
}

const label = (modelId: string) => `[offline] The offline model (${modelId}) wrote this; no model provider was called.`

/**
 * The offline model's answer to a council prompt; undefined when the messages are not one. A
 * proposal carries the offline model's plain answer to the conversation (`plain`), so that auto
 * mode's single answer reads like single mode's.
 */
export const answerFor = (
  messages: ReadonlyArray<ChatMessage>,
  modelId: string,
  plain: (messages: ReadonlyArray<ChatMessage>) => string
): string | undefined => {
  const round = Protocol.roundOf(messages)
  if (round === undefined) return undefined
  const seat = seatOf(messages)
  const question = questionOf(messages, round)
  const own = positionFor(question, seat)
  const last = messages.at(-1)?.content ?? ""
  switch (round) {
    case "proposals":
      return [
        `POSITION: ${own.position}`,
        plain(messages.filter((message) => !message.content.startsWith(Protocol.marker))),
        `As a council member it took ${own.rule}, by a fixed rule of its seat's perspective.`
      ].join("\n")
    case "position":
      return `POSITION: ${own.position}`
    case "critique": {
      const peers = [...last.matchAll(/--- Participant (\w+) ---\nPOSITION: (.*)/g)].map((m) => `Participant ${m[1]} holds "${m[2]}"`)
      return [
        `CRITIQUE: ${label(modelId)} ${peers.length > 0 ? `${peers.join("; ")}.` : "It saw no other proposal."} It does not weigh arguments.`,
        `POSITION: ${own.position}`,
        "CHANGED: no",
        "REASON: The offline model keeps its first position."
      ].join("\n")
    }
    case "synthesis": {
      const held = [...last.matchAll(/--- (Your own|Participant \w+) ---\nFirst position: .*\nPosition now: (.*)/g)].map((m) => ({ own: m[1] === "Your own", position: m[2]!.trim() }))
      const counts = new Map<string, number>()
      for (const member of held) counts.set(member.position, (counts.get(member.position) ?? 0) + 1)
      const mine = held.find((member) => member.own)?.position
      const top = Math.max(0, ...counts.values())
      const chosen = [...counts.entries()].filter(([, n]) => n === top).map(([p]) => p)
      const position = mine !== undefined && chosen.includes(mine) ? mine : chosen[0] ?? own.position
      const others = [...counts.entries()].filter(([p]) => p !== position).map(([p, n]) => `"${p}" (${n} of ${held.length})`)
      return [
        `POSITION: ${position}`,
        position,
        `${label(modelId)} The consensus is the position most members hold (${counts.get(position) ?? 1} of ${held.length}).`,
        others.length > 0 ? `Other views, not adopted: ${others.join(", ")}.` : "Every member held it."
      ].join("\n")
    }
    case "ratification": {
      const consensus = Protocol.labelled(last, "POSITION") ?? ""
      const mine = /Your position after the critique: (.*)/.exec(messages.map((m) => m.content).join("\n"))?.[1]?.trim() ?? own.position
      return Protocol.samePosition(mine, consensus)
        ? JSON.stringify({ vote: "endorse", claim: "", rationale: `${label(modelId)} The consensus states its position.` })
        : JSON.stringify({
          vote: "dissent",
          claim: mine,
          rationale: `${label(modelId)} Its position (${own.rule}) is not the consensus's.`
        })
    }
  }
}
