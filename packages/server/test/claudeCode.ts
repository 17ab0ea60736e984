/**
 * Claude Code itself, unmodified, for the client suites (`npm run test:clients`): its native
 * binary from the test-only package `test-clients/` (373 MB, kept out of the workspace's install;
 * `.ci/run` installs it), run in `-p` mode with `--output-format json` against a base URL, in a
 * temporary working directory and `HOME` of its own, with no network beyond that URL.
 *
 * npm does not run the package's postinstall (which would put the binary behind its `claude`
 * command), so the platform package's binary is called directly.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The only platform package `test-clients/` pins: other platforms skip the suites. */
const platformPackage = "@anthropic-ai/claude-code-linux-x64"

/** Where the binary is, when `test-clients/` is installed on a platform it serves. */
export const binary = join(root, "test-clients", "node_modules", platformPackage, "claude")

/** Why the Claude Code suites cannot run here, or `undefined` when they can. */
export const unavailable: string | undefined = process.platform !== "linux" || process.arch !== "x64"
  ? `Claude Code's tests need linux-x64 (this is ${process.platform}-${process.arch})`
  : existsSync(binary)
  ? undefined
  : "Claude Code is not installed: run `npm ci --prefix test-clients`"

/** What `-p --output-format json` prints: the fields these tests read. */
export interface Result {
  readonly type: "result"
  readonly subtype: string
  readonly is_error: boolean
  readonly result: string
  readonly num_turns: number
  readonly stop_reason?: string | null
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number }
  readonly permission_denials: ReadonlyArray<unknown>
}

export interface Run {
  readonly result: Result
  readonly stderr: string
}

export interface Options {
  /** The API root Claude Code talks to (`ANTHROPIC_BASE_URL`). */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` (`ANTHROPIC_AUTH_TOKEN`). */
  readonly token: string
  /** The working directory (default: an empty temporary one). */
  readonly cwd?: string
  /** More command-line arguments (`--model`, `--allowedTools` …). */
  readonly args?: ReadonlyArray<string>
  readonly timeoutMs?: number
  /** More environment variables (`CLAUDE_CODE_MAX_OUTPUT_TOKENS` …). */
  readonly env?: Readonly<Record<string, string>>
}

/** A temporary directory, removed by the returned function. */
export const tempDir = (prefix: string): { readonly path: string; readonly remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/**
 * `claude -p <prompt> --output-format json`, its result parsed. The environment is built, not
 * inherited: no credential of the machine's reaches it, and its settings and sessions go to a
 * temporary `HOME` that is removed afterwards.
 */
export const run = async (prompt: string, options: Options): Promise<Run> => {
  const home = tempDir("huddle-claude-home-")
  const work = options.cwd === undefined ? tempDir("huddle-claude-work-") : undefined
  try {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home.path,
      ANTHROPIC_BASE_URL: options.baseUrl,
      ANTHROPIC_AUTH_TOKEN: options.token,
      // No telemetry, error reports, update checks or other traffic beyond the API calls.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ...options.env
    }
    const args = ["-p", prompt, "--output-format", "json", ...(options.args ?? [])]
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = execFile(
        binary,
        args,
        { cwd: options.cwd ?? work!.path, env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
        (error, out, err) => {
          // A failed turn still prints its result (is_error: true) and exits non-zero: read it.
          if (error && out.trim().length === 0) reject(new Error(`claude failed: ${error.message}\n${err}`))
          else resolve({ stdout: out, stderr: err })
        }
      )
      child.stdin?.end()
    })
    const line = stdout.trim().split("\n").at(-1) ?? ""
    try {
      return { result: JSON.parse(line) as Result, stderr }
    } catch {
      throw new Error(`claude printed no JSON result:\n${stdout}\n${stderr}`)
    }
  } finally {
    home.remove()
    work?.remove()
  }
}
