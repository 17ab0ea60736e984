// @ts-check
/**
 * Builds the web console into `dist/`: `index.html` and its fingerprinted assets
 * (`assets/app-<hash>.js`, `assets/app-<hash>.css`), everything bundled from this repository's
 * sources and packages, so that the page needs no other host. The root `build` and `prepare`
 * scripts run it after `tsc -b` (the contract it imports, `@huddle/server/contract`, is then
 * built); the server reads the result (packages/server/src/edge/Console.ts).
 */
import * as esbuild from "esbuild"
import { rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL(".", import.meta.url))
const entry = "src/main.tsx"

rmSync(`${root}dist`, { recursive: true, force: true })

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: entry },
  outdir: "dist",
  // [hash] is of the file's content: a changed file gets a new name, so it may be cached forever.
  entryNames: "assets/[name]-[hash]",
  assetNames: "assets/[name]-[hash]",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  metafile: true,
  logLevel: "warning"
})

/** The output built from the entry, and the stylesheet esbuild gathered for it. */
const [script, output] = Object.entries(result.metafile.outputs).find(([, out]) => out.entryPoint === entry) ?? []
if (script === undefined || output?.cssBundle === undefined) throw new Error(`esbuild built no script and stylesheet for ${entry}`)

/** `dist/assets/app-X.js` as the page refers to it, from the site's root. */
const href = (/** @type {string} */ file) => `/${file.replace(/^dist\//, "")}`

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Huddle</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href(output.cssBundle)}">
<script type="module" src="${href(script)}"></script>
</head>
<body>
<noscript>The Huddle console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`
writeFileSync(`${root}dist/index.html`, page)
console.log(`console built: ${href(script)}, ${href(output.cssBundle)}`)
