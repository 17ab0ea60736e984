/**
 * The evaluation's questions: multiple choice with a known answer, generated from a seed.
 * Each is a small arithmetic problem with five options whose wrong ones are the mistakes people
 * make (a sign, a carry, a digit), so that a real model (`--real`) can be scored on them too; the
 * simulated participants only read the question's number and look the answer up.
 */
import type { ChatMessage } from "@huddle/domain/models/Model"
import { keyed } from "./Prng.js"

export const letters = ["A", "B", "C", "D", "E"] as const
export type Letter = (typeof letters)[number]

export interface Question {
  readonly id: number
  readonly text: string
  readonly values: Readonly<Record<Letter, number>>
  readonly correct: Letter
  /**
   * The wrong answer most tempting for this question: the simulated participants' correlated
   * mistakes all land on it.
   */
  readonly popularWrong: Letter
}

export const wrongOf = (question: Question): ReadonlyArray<Letter> => letters.filter((letter) => letter !== question.correct)

const make = (seed: number, id: number): Question => {
  const draw = keyed(seed, "question", id)
  const a = 13 + draw.int(86)
  const b = 13 + draw.int(86)
  const c = 101 + draw.int(799)
  const value = a * b - c
  const tempting = draw.shuffle([value + 10, value - 10, value + 100, value - 100, a * b + c, value + a, value - b, value + 1])
  const wrong = [...new Set(tempting.filter((v) => v !== value && v > 0))].slice(0, 4)
  const order = draw.shuffle([value, ...wrong])
  const values = Object.fromEntries(letters.map((letter, i) => [letter, order[i]!])) as Record<Letter, number>
  const correct = letters[order.indexOf(value)]!
  const popularWrong = draw.pick(letters.filter((letter) => letter !== correct))
  const options = letters.map((letter) => `${letter}) ${values[letter]}`).join(", ")
  return {
    id,
    text: `Question #${id}: which option is correct? What is ${a} × ${b} − ${c}? Options: ${options}. ` +
      "Answer with the letter of the correct option.",
    values,
    correct,
    popularWrong
  }
}

/** `count` questions, numbered from 1. */
export const generate = (seed: number, count: number): ReadonlyArray<Question> =>
  Array.from({ length: count }, (_, i) => make(seed, i + 1))

/** The conversation a council answers: the question alone. */
export const messagesOf = (question: Question): ReadonlyArray<ChatMessage> => [{ role: "user", content: question.text }]

/** The question a conversation asks, by its number. */
export const idOf = (messages: ReadonlyArray<ChatMessage>): number | undefined => {
  for (const message of messages) {
    const match = /Question #(\d+):/.exec(message.content)
    if (match !== null) return Number(match[1])
  }
  return undefined
}

/** A position as the simulated participants state it. */
export const statement = (letter: Letter): string => `The answer is ${letter}.`

const isLetter = (text: string | undefined): text is Letter => text !== undefined && (letters as ReadonlyArray<string>).includes(text)

/**
 * The option a position chooses: `answer is C`, `option C`, a leading `C)`, else the one option
 * whose value it quotes; undefined when it names none (or several by value).
 */
export const letterOf = (position: string | null | undefined, question?: Question): Letter | undefined => {
  if (position === null || position === undefined) return undefined
  const text = position.replace(/\*\*|__/g, "")
  const named = /\b(?:[Aa]nswer|[Oo]ption|[Cc]hoice)(?:\s+is)?\s*[:-]?\s*\(?([A-E])\)?(?![A-Za-z0-9])/.exec(text)
  if (isLetter(named?.[1])) return named[1]
  const leading = /^\s*\(?([A-E])(?:[).:]|\s*$)/.exec(text)
  if (isLetter(leading?.[1])) return leading[1]
  if (question === undefined) return undefined
  const quoted = letters.filter((letter) => new RegExp(`(?<![\\d,])${question.values[letter]}(?![\\d,])`).test(text))
  return quoted.length === 1 ? quoted[0] : undefined
}
