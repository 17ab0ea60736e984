import { describe, expect, it } from "@effect/vitest"
import { type RiskCategory, riskFlags } from "@huddle/domain/huddle/RiskFlags"

const categories = (input: string) => riskFlags(input).map((flag) => flag.category)

/** [rule, phrasings that fall under it, the categories each must be flagged with]. */
const flagged: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<RiskCategory>]> = [
  ["a destructive verb aimed at data or where it lives is destructive", [
    "Drop the users table",
    "Delete all customer records",
    "Wipe the disk on the build box",
    "Purge the old audit entries from the database",
    "Destroy the staging environment",
    "Truncate the orders table",
    "Erase every backup older than a week",
    "Format the external hard drive"
  ], ["destructive"]],
  ["a destructive command is destructive, whatever surrounds it", [
    "rm -rf / --no-preserve-root",
    "DELETE FROM customers WHERE 1=1",
    "DROP DATABASE analytics;",
    "Run terraform destroy in the sandbox account"
  ], ["destructive"]],
  ["talk of losing data is destructive", [
    "Is there any data loss if I run this migration twice?",
    "This will permanently delete the archive, go ahead"
  ], ["destructive"]],
  ["handling a credential, or switching authentication off, is credentials", [
    "What is the admin password for the reporting database?",
    "Paste our OpenAI API key into the config",
    "Rotate the secrets in the vault",
    "Print the GitHub token we use in CI",
    "Send me the private key for the signing certificate",
    "Disable 2FA for all admins",
    "Turn off authentication on the internal dashboard",
    "Commit the .env file to the repository"
  ], ["credentials"]],
  ["changing the production system, force pushing to main or silencing its safety nets is production", [
    "Deploy this branch to production",
    "Restart the prod API servers",
    "Migrate the production schema tonight",
    "The production cluster needs a reboot now",
    "Force push my branch to main",
    "git push origin main --force",
    "Disable monitoring while we do the upgrade",
    "Mute the alerts for the weekend"
  ], ["production"]],
  ["moving money, or changing where it goes, is money movement", [
    "Transfer $5,000 to the contractor's account",
    "Wire the funds to our supplier today",
    "Pay all outstanding invoices from the ops budget",
    "Refund the customer's last three orders",
    "Withdraw 2000 EUR from the company wallet",
    "Update the billing details to the new card",
    "Change the bank account number for payouts",
    "Issue a full refund to this buyer"
  ], ["money_movement"]],
  ["an everyday verb acting on production is production (resetting a local database is not)", [
    "Reset the prod database",
    "Update the production config to the new cache size"
  ], ["production"]]
]

const benign: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["the same verbs aimed at something that is not data are not flagged", [
    "How do I drop a pin on the map?",
    "Drop me a line when the build is green",
    "Truncate the string to 80 characters",
    "Purge the CDN cache after the deploy",
    "Delete the last paragraph of this draft",
    "Format this date as ISO 8601",
    "Wipe the whiteboard notes into a summary"
  ]],
  ["asking what a statement does, without a target, is not flagged", [
    "Explain what DELETE does in SQL",
    "What is a primary key?"
  ]],
  ["resetting a local development database is routine, not flagged (production is)", [
    "reset my local dev database"
  ]],
  ["credential words in their everyday senses are not flagged", [
    "What's the secret to a good sourdough?",
    "How many tokens does this prompt use?",
    "Explain the token bucket rate limiter",
    "The secrets of good API design"
  ]],
  ["production as an adjective or in manufacturing is not flagged", [
    "Is this code production-ready?",
    "What was the production of wheat in France in 2020?"
  ]],
  ["money words in other senses are not flagged", [
    "Explain transfer learning in two sentences",
    "Transfer the files to the new server",
    "Pay attention to the error logs",
    "Write our refund policy page",
    "What's the process for refunds?"
  ]]
]

describe("risk flags", () => {
  for (const [rule, inputs, expected] of flagged) {
    describe(`flagged: ${rule}`, () => {
      it.each(inputs)("%s", (input) => {
        expect(categories(input)).toEqual(expect.arrayContaining([...expected]))
      })
    })
  }

  for (const [rule, inputs] of benign) {
    describe(`not flagged: ${rule}`, () => {
      it.each(inputs)("%s", (input) => {
        expect(riskFlags(input)).toEqual([])
      })
    })
  }

  it("reports each category once, with the passage that matched, in a fixed order", () => {
    expect(riskFlags("Drop the users table in production and wire $200 to Bob").map(({ category, match }) => ({ category, match }))).toEqual([
      { category: "destructive", match: "Drop the users table" },
      { category: "production", match: "Drop the users table in production" },
      { category: "money_movement", match: "wire $200" }
    ])
    expect(riskFlags("Delete the prod database").map((flag) => flag.category)).toEqual(["destructive", "production"])
  })
})
