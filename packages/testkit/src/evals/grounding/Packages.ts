/**
 * The npm packages the grounding evaluation reads: real code with its tests, written by nobody
 * here. Each is pinned to an exact version and to the integrity hash the registry publishes for
 * it; it is fetched once with `npm pack` into a cache directory, checked against that hash, and
 * extracted with `tar`. Later runs use the cache and need no network; with no network and nothing
 * cached, the run stops and says so.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"

export interface Pinned {
  readonly name: string
  readonly version: string
  /** `dist.integrity` of the version on the npm registry (`npm view <name>@<version> dist.integrity`). */
  readonly integrity: string
  readonly about: string
}

export const pinned: ReadonlyArray<Pinned> = [
  {
    name: "jsx-ast-utils",
    version: "3.3.5",
    integrity: "sha512-ZZow9HBI5O6EPgSJLUb8n2NKgmVWTwCvHGwFuJlMjvLFqlGG6pjirPhtdsseaLZjSibD8eegzmYpUZwoIlj2cQ==",
    about: "reads JSX props and their values from an AST; src/ with its Babel-compiled copy in lib/, tests in __tests__/"
  },
  {
    name: "qs",
    version: "6.14.0",
    integrity: "sha512-YWWTjgABSKcvs/nWBi9PycY/JiPJqOD4JA6o9Sej2AtvSGarXxKC3OQSk4pAarbdQlKAh5D4FCQkJNkW+GAn3w==",
    about: "query-string parsing and serialising; lib/, tests in test/"
  },
  {
    name: "resolve",
    version: "1.22.10",
    integrity: "sha512-NPRy+/ncIMeDlTAsuqwKIiferiawhefFJtkNSW0qZJEqMEb+qBt/77B/jGeeek+F0uOeN05CDa6HXbbIgtVX4w==",
    about: "Node's module resolution algorithm; lib/ and a CLI, tests and fixtures in test/"
  },
  {
    name: "ioredis",
    version: "5.11.1",
    integrity: "sha512-ehuGcf94bQXhfagULNXrJdfnWO38v070jxSx/qE87Kjzmu2fU7ro5EFAb+OPituLqgfyuQaym5DlrNydW2sJ9A==",
    about: "a Redis client in TypeScript, published compiled: built/*.js, each beside its declarations built/*.d.ts; no tests"
  },
  {
    name: "pg-protocol",
    version: "1.16.1",
    integrity: "sha512-p9VOFMiHB/ZbJATetbg+99PxssTVSQRnyuPSQ67mN1+1KBOjZaZ83ZQzltnxPhJwSsC3nwVjJ10DVJlerbFzLg==",
    about: "PostgreSQL's wire protocol in TypeScript: src/ with its tests beside the code, an ESM wrapper, compiled dist/ (skipped)"
  }
]

/** Why a package could not be made ready: the harness cannot run without it. */
export class PackageUnavailable extends Error {
  override readonly name = "PackageUnavailable"
}

const id = (p: Pinned) => `${p.name}-${p.version}`

const integrityOf = (file: string): string => `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs: number) =>
  new Promise<{ readonly ok: boolean; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ ok: error === null, stdout, stderr: stderr || (error?.message ?? "") }))
  })

/** npm's error code and message (`ECONNREFUSED: request to … failed`), without its stack and advice. */
const npmReason = (stderr: string): string => {
  const errors = stderr.split("\n").map((line) => line.replace(/^npm error\s*/, "").trim()).filter((line) => line !== "" && !line.startsWith("npm warn"))
  const code = errors.find((line) => line.startsWith("code "))?.slice(5)
  const message = errors.find((line) => !/^(?:code|syscall|errno) |^at /.test(line))
  return [code, message].filter((part) => part !== undefined).join(": ") || "npm gave no reason"
}

/**
 * The extracted package directory of `pin` under `cacheDir`, and whether its tarball came from the
 * cache. A cached tarball is checked against the pinned integrity on every run; one that fails is
 * fetched again.
 */
export const ready = async (pin: Pinned, cacheDir: string): Promise<{ readonly root: string; readonly cached: boolean }> => {
  mkdirSync(cacheDir, { recursive: true })
  const tarball = join(cacheDir, `${id(pin)}.tgz`)
  const extracted = join(cacheDir, id(pin))

  const cached = existsSync(tarball) && integrityOf(tarball) === pin.integrity
  if (!cached) {
    rmSync(tarball, { force: true })
    const packed = await run(
      "npm",
      ["pack", `${pin.name}@${pin.version}`, "--pack-destination", cacheDir, "--fetch-retries=1", "--fetch-timeout=30000", "--ignore-scripts"],
      cacheDir,
      120_000
    )
    if (!packed.ok || !existsSync(tarball)) {
      throw new PackageUnavailable(
        `cannot fetch ${pin.name}@${pin.version} from the npm registry (${npmReason(packed.stderr)}), and no copy matching its pinned integrity is cached in ${cacheDir}. ` +
          "Run once with network access to the registry; later runs use the cache."
      )
    }
    const actual = integrityOf(tarball)
    if (actual !== pin.integrity) {
      rmSync(tarball, { force: true })
      throw new PackageUnavailable(`${pin.name}@${pin.version} does not match its pinned integrity (expected ${pin.integrity}, got ${actual}); refusing to use it`)
    }
  }

  // Extracted afresh from the checked tarball on every run (a few milliseconds): the tree indexed is the one published.
  const staging = `${extracted}.partial`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const untar = await run("tar", ["-xzf", tarball, "-C", staging], cacheDir, 60_000)
  if (!untar.ok || !existsSync(join(staging, "package"))) {
    rmSync(staging, { recursive: true, force: true })
    throw new PackageUnavailable(`cannot extract ${tarball} with tar: ${untar.stderr.trim() || "no package/ directory in it"}`)
  }
  rmSync(extracted, { recursive: true, force: true })
  renameSync(staging, extracted)
  return { root: join(extracted, "package"), cached }
}
