/**
 * Another process swapping files between plain files and symlinks leading elsewhere, as fast as
 * it can, to race whatever reads them (the indexer's confinement to a repository's directory).
 */
import { spawn } from "node:child_process"

const script = `
  const fs = require("node:fs")
  const [target, millis, ...files] = process.argv.slice(1)
  const end = Date.now() + Number(millis)
  const contents = files.map((file) => fs.readFileSync(file))
  let swaps = 0
  while (Date.now() < end) {
    files.forEach((file, i) => {
      // Each swap one atomic rename: the path always exists, as a link or as the file.
      fs.symlinkSync(target, file + ".link")
      fs.renameSync(file + ".link", file)
      fs.writeFileSync(file + ".plain", contents[i])
      fs.renameSync(file + ".plain", file)
      swaps += 2
    })
  }
  process.stdout.write(String(swaps))
`

/**
 * Swaps each of `files` (plain files, put back with their content at the end) for a symlink to
 * `target` and back, for `millis`; resolves with the number of swaps made.
 */
export const swap = (files: ReadonlyArray<string>, target: string, millis: number): Promise<number> =>
  new Promise<number>((done, fail) => {
    const child = spawn(process.execPath, ["-e", script, target, String(millis), ...files], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.on("error", fail)
    child.on("exit", (code) => (code === 0 ? done(Number(out)) : fail(new Error(`the swapping process exited with ${code}`))))
  })
