/** The free-form input shared by huddle messages and JSON-RPC intents. */
import { Text } from "@huddle/domain/shared/WireString"
import { Schema } from "effect"
import { maxInputLength } from "./Limits.js"

/** What a huddle message (or a JSON-RPC intent) asks: free-form text, not blank. */
export const Input = Text.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be blank" }),
  Schema.maxLength(maxInputLength, { message: () => `must be at most ${maxInputLength} characters` })
)
