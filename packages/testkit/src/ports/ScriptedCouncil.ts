/**
 * Council participants' answers for scripted models (`ScriptedModels`): each round answered as
 * the protocol reads it, so that a test says only how a seat departs from that.
 */
import type * as Protocol from "@huddle/domain/council/Protocol"
import type { ModelRequest } from "@huddle/domain/models/Model"
import { answer, type Answer } from "./ScriptedModels.js"

/** What every scripted answer reports: small enough that no call's charge is capped by its reservation. */
export const usage = { input_tokens: 50, output_tokens: 20 }

/** What seat `seat` answers when asked in `round` (or, `position`, for auto mode's second opinion). */
export type Behaviour = (seat: number, round: Protocol.PromptRound, request: ModelRequest) => Answer

export const say = (text: string): Answer => answer([text.slice(0, 7), text.slice(7)], usage)

export const agreed = "Start with PostgreSQL."
export const said = {
  proposal: (seat: number, position = agreed) => `POSITION: ${position}\nProposal ${seat}: a relational store fits a small team.`,
  position: (position = agreed) => `POSITION: ${position}`,
  critique: (seat: number, position = agreed, changed = false) =>
    `CRITIQUE: Critique ${seat}: the others are sound.\nPOSITION: ${position}\nCHANGED: ${changed ? "yes" : "no"}\nREASON: Reason ${seat}.`,
  synthesis: (seat: number) => `POSITION: ${agreed}\nConsensus ${seat}: PostgreSQL, with backups from day one.`,
  endorse: (seat: number) => JSON.stringify({ vote: "endorse", rationale: `Endorsement ${seat}: it matches my view.` }),
  dissent: (seat: number) =>
    JSON.stringify({ vote: "dissent", claim: `Claim ${seat}: start with SQLite.`, rationale: `Rationale ${seat}: one file, no server.` })
}

/** Every round answered readably, and the ballot an endorsement. */
export const standard: Behaviour = (seat, round) => {
  switch (round) {
    case "proposals":
      return say(said.proposal(seat))
    case "position":
      return say(said.position())
    case "critique":
      return say(said.critique(seat))
    case "synthesis":
      return say(said.synthesis(seat))
    case "ratification":
      return say(said.endorse(seat))
  }
}

