/** Dates and amounts as the reader's locale writes them. */
import { DateTime } from "effect"

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const number = new Intl.NumberFormat()

export const when = (at: DateTime.Utc): string => dateTime.format(DateTime.toDate(at))

export const iso = (at: DateTime.Utc): string => DateTime.formatIso(at)

export const credits = (amount: number): string => `${number.format(amount)} ${amount === 1 ? "credit" : "credits"}`

/** A model call's tokens, in and out. */
export const tokens = (input: number, output: number): string => `${number.format(input)} in, ${number.format(output)} out`
