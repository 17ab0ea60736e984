/**
 * What the review stage flags for a human under `risk_tolerance: low`: requests that would
 * destroy data, handle credentials, change production or move money. Each rule pairs an action
 * with what it acts on (a verb near its object), so that the same words used harmlessly ("drop a
 * pin", "the secret to good bread", "transfer learning") are not flagged. It is a net for a
 * reviewer, not a guard: it errs towards flagging.
 *
 * ```ts
 * riskFlags("Drop the users table") // [{ category: "destructive", match: "Drop the users table" }]
 * ```
 */
import { Schema } from "effect"

export const RiskCategory = Schema.Literal("destructive", "credentials", "production", "money_movement")
export type RiskCategory = typeof RiskCategory.Type

/** One category the input matched, with the passage that matched it (the first one). */
export class RiskFlag extends Schema.Class<RiskFlag>("RiskFlag")({
  category: RiskCategory,
  match: Schema.String
}) {}

const alternatives = (words: ReadonlyArray<string>) => `(?:${words.join("|")})`

/** `verb`, up to `gap` words, then `object`, within one sentence. */
const near = (verbs: ReadonlyArray<string>, objects: ReadonlyArray<string>, gap = 4) =>
  `\\b${alternatives(verbs)}\\b(?:[^\\S\\n]+[^\\s.!?;]+){0,${gap}}[^\\S\\n]+${alternatives(objects)}`

const rule = (source: string) => new RegExp(source, "i")

// Where data lives, and data itself.
const storage = ["tables?\\b", "databases?\\b", "dbs?\\b", "schemas?\\b", "collections?\\b", "columns?\\b", "keyspaces?\\b", "buckets?\\b", "partitions?\\b", "indexe?s?\\b"]
const data = [
  ...storage,
  "records?\\b", "rows?\\b", "data\\b", "datasets?\\b", "entries\\b", "users?\\b", "accounts?\\b", "customers?\\b",
  "files?\\b", "folders?\\b", "director(?:y|ies)\\b", "disks?\\b", "drives?\\b", "volumes?\\b", "backups?\\b",
  "snapshots?\\b", "logs?\\b", "history\\b", "repos?\\b", "repositor(?:y|ies)\\b", "everything\\b", "servers?\\b",
  "clusters?\\b", "instances?\\b", "infrastructure\\b", "stacks?\\b", "environments?\\b"
]
const devices = ["disks?\\b", "drives?\\b", "hard[ -]?drives?\\b", "partitions?\\b", "volumes?\\b", "ssds?\\b", "usb\\b", "sd[ -]?cards?\\b", "c:"]

// "production" that names the live system, not manufacturing or a quality ("production-ready").
const production = "(?:prod|production)\\b(?![ -](?:ready|grade|quality|process|line|company|costs?|values?)\\b| of\\b)"
const liveSystem = `(?:${production}|live (?:site|environment|servers?|systems?|database|db)\\b)`
const changes = [
  "deploy(?:s|ed|ing)?", "redeploy", "push(?:es|ed|ing)?", "ship", "release", "roll ?out", "rollout", "migrate", "migrations?",
  "restart", "reboot", "shut ?down", "scale down", "roll ?back", "rollback", "hotfix", "patch", "apply", "change",
  "modify", "update", "edit", "delete", "drop", "reset", "wipe", "stop", "kill", "truncate", "purge"
]

const money = [
  "money\\b", "funds\\b", "cash\\b", "[$€£] ?\\d[\\d,.]*", "\\d[\\d,.]* ?(?:usd|eur|gbp|dollars|euros|pounds|btc|eth)\\b", "dollars\\b",
  "euros\\b", "bitcoins?\\b", "btc\\b", "crypto\\b", "wages\\b", "salar(?:y|ies)\\b", "payroll\\b"
]

const rules: ReadonlyArray<readonly [RiskCategory, ReadonlyArray<RegExp>]> = [
  ["destructive", [
    rule("\\brm\\s+-[a-z]*(?:rf|fr)[a-z]*\\b"),
    rule("\\b(?:delete\\s+from|drop\\s+(?:table|database|schema|collection)|truncate\\s+table)\\b"),
    rule("\\b(?:mkfs(?:\\.\\w+)?|dd\\s+if=|terraform\\s+destroy|format\\s+c:)"),
    rule(near(["delete", "deletes", "deleting", "erase", "wipe", "purge", "destroy", "nuke", "shred", "obliterate"], data)),
    // "drop" and "truncate" also mean harmless things ("drop a pin", "truncate a string"): only storage.
    rule(near(["drop", "truncate"], storage)),
    rule(near(["format", "reformat"], devices, 3)),
    rule("\\b(?:data\\s+loss|lose\\s+(?:all\\s+)?(?:the\\s+|my\\s+|our\\s+|their\\s+)?data|permanently\\s+(?:delete|remove|erase)|irreversibl[ey])\\b")
  ]],
  ["credentials", [
    // "secrets" alone, not "the secrets of good design".
    rule("\\b(?:passwords?|passphrases?|passwd|credentials?|secrets(?!\\s+(?:of|to|behind|for)\\b))\\b"),
    rule("\\b(?:api|access|secret|private|ssh|signing|encryption|gpg|pgp)[ _-]?keys?\\b"),
    rule("\\b(?:client[ _-]secrets?|(?:access|auth|bearer|api|session|refresh|oauth|github|jwt|personal access)[ _-]?tokens?)\\b"),
    rule("(?:^|\\s)\\.env\\b"),
    rule(near(["disable", "turn off", "bypass", "skip", "remove", "deactivate", "switch off"], [
      "auth\\b", "authentication\\b", "authorization\\b", "2fa\\b", "mfa\\b", "two[ -]factor\\b", "multi[ -]factor\\b", "sso\\b", "otp\\b"
    ], 3))
  ]],
  ["production", [
    rule(near(changes, [liveSystem], 5)),
    rule(`${liveSystem}(?:[^\\S\\n]+[^\\s.!?;]+){0,3}?[^\\S\\n]+${alternatives(changes)}\\b`),
    rule("\\bforce[ -]?push(?:es|ed|ing)?\\b(?:[^\\S\\n]+[^\\s.!?;]+){0,3}?[^\\S\\n]+(?:main|master|release|prod|production)\\b"),
    rule("\\bpush\\b[^.!?;\\n]*\\s(?:--force(?:-with-lease)?|-f)\\b[^.!?;\\n]*\\b(?:main|master|release|prod|production)\\b"),
    rule("\\bpush\\b[^.!?;\\n]*\\b(?:main|master|release|prod|production)\\b[^.!?;\\n]*\\s(?:--force(?:-with-lease)?|-f)\\b"),
    rule(near(["disable", "turn off", "switch off", "silence", "mute", "stop", "kill", "pause", "snooze"], [
      "monitoring\\b", "monitors?\\b", "alerts\\b", "alerting\\b", "alarms?\\b", "pagerduty\\b", "on-?call\\b", "paging\\b",
      "health ?checks?\\b", "audit log(?:s|ging)?\\b", "logging\\b", "backups?\\b", "firewall\\b", "waf\\b"
    ], 3))
  ]],
  ["money_movement", [
    rule(near(["transfer", "wire", "send", "move", "pay", "pay out", "withdraw", "deposit", "remit", "disburse", "refund"], money)),
    rule(near(["pay", "settle"], ["invoices?\\b", "bills?\\b", "vendors?\\b", "suppliers?\\b", "contractors?\\b"], 3)),
    rule("\\brefund(?:ed|ing)?\\s+(?:the|this|that|a|an|all|every|their|his|her|my|our|them|him|customers?|orders?|payments?|charges?|purchases?)\\b"),
    rule("\\b(?:issue|process|give|grant|approve)\\s+(?:(?:a|an|the|this|that|their|his|her|them|him|full|partial|customers?)\\s+){0,3}refunds?\\b"),
    rule(near(["change", "update", "edit", "replace", "set", "modify", "switch"], [
      "(?:billing|bank|banking|payout|payment|wire|card) (?:details|info|information|accounts?|address|methods?|numbers?)\\b",
      "iban\\b", "routing numbers?\\b", "swift code\\b"
    ]))
  ]]
]

/** The categories `input` falls in, in a fixed order, each with the first passage that matched. */
export const riskFlags = (input: string): ReadonlyArray<RiskFlag> =>
  rules.flatMap(([category, patterns]) => {
    for (const pattern of patterns) {
      const found = pattern.exec(input)
      if (found !== null) return [new RiskFlag({ category, match: found[0].trim() })]
    }
    return []
  })
