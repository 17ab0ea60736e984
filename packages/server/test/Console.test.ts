/**
 * The web console as the server serves it (edge/Console.ts): the page at `/` revalidated on
 * every load under a strict content security policy, its fingerprinted assets cached for good
 * with their content types, nothing else of the file system reachable, the API still under
 * `/v1`, and a page that says what to do when the console is not built. Needs the console built
 * (`npm run build`; `npm install` does it).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpApp } from "@effect/platform"
import * as Console from "@huddle/server/edge/Console"
import { TestServer } from "@huddle/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
const rawGet = (url: string, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { method: "GET", path }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
    })
    request.on("error", reject)
    request.end()
  })

describe("the web console", () => {
  let server: TestServer.TestServer
  let page: TestServer.Response
  /** The assets the page refers to, as written in it. */
  let assets: ReadonlyArray<string>
  beforeAll(async () => {
    server = await TestServer.start()
    page = await server.request("GET", "/")
    assets = [...page.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!)
  })
  afterAll(() => server.stop())

  it("serves the page at /, revalidated on every load, allowed to load only from its own origin", () => {
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-cache")
    const policy = page.headers.get("content-security-policy") ?? ""
    expect(policy.split("; ")).toEqual(expect.arrayContaining(["default-src 'self'", "frame-ancestors 'none'", "object-src 'none'"]))
    // No source is allowed beyond the origin (data: images only): no 'unsafe-inline', no host.
    expect(policy).not.toMatch(/unsafe|https?:|\*/)
    expect(page.headers.get("x-content-type-options")).toBe("nosniff")
    // Nothing from another host, and one fingerprinted script and stylesheet.
    expect(page.text).not.toMatch(/https?:\/\//)
    expect(assets).toEqual([expect.stringMatching(/^\/assets\/app-[A-Z0-9]{8,}\.css$/), expect.stringMatching(/^\/assets\/app-[A-Z0-9]{8,}\.js$/)])
  })

  it("serves each asset as built, with its content type, cached for a year and never revalidated", async () => {
    const dist = Console.builtDirectory()!
    for (const [asset, contentType] of [[assets[0]!, "text/css; charset=utf-8"], [assets[1]!, "text/javascript; charset=utf-8"]] as const) {
      const answer = await server.request("GET", asset)
      expect(answer.status, asset).toBe(200)
      expect(answer.headers.get("content-type"), asset).toBe(contentType)
      expect(answer.headers.get("cache-control"), asset).toBe("public, max-age=31536000, immutable")
      expect(answer.headers.get("x-content-type-options"), asset).toBe("nosniff")
      // fetch asks for gzip and decompresses: the bytes are the built file's.
      expect(answer.headers.get("content-encoding"), asset).toBe("gzip")
      expect(answer.text, asset).toBe(readFileSync(join(dist, asset), "utf8"))
    }
    const plain = await server.request("GET", assets[1]!, { headers: { "accept-encoding": "identity" } })
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(plain.text).toBe(readFileSync(join(dist, assets[1]!), "utf8"))
  })

  it("answers an unknown asset with the 404 envelope, and reaches no file outside the assets", async () => {
    const unknown = await server.request("GET", "/assets/app-NOTBUILT.js")
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: "NOT_FOUND", message: expect.any(String) })
    for (const path of ["/assets/../index.html", "/assets/..%2Findex.html", "/assets/%2e%2e%2f%2e%2e%2fpackage.json", "/assets/../../package.json", "/assets/..\\..\\package.json"]) {
      const answer = await rawGet(server.url, path)
      expect(answer.status, path).toBe(404)
      expect(answer.body, path).not.toContain("@huddle/console")
      expect(answer.body, path).not.toContain("<html")
    }
  })

  it("leaves the API under /v1 and the API reference at /docs", async () => {
    const me = await server.request("GET", "/v1/me")
    expect(me.status).toBe(401)
    expect(me.body).toMatchObject({ error: "UNAUTHORIZED" })
    const signup = await server.request("POST", "/v1/auth/signup", { body: { email: "console@example.com", password: "long enough" } })
    expect(signup.status).toBe(201)
    expect((await server.request("GET", "/docs")).text).toContain("Huddle API")
    expect((await server.request("GET", "/v1/nope")).status).toBe(404)
  })
})

describe("a server whose console is not built", () => {
  let empty: string
  beforeAll(() => {
    empty = mkdtempSync(join(tmpdir(), "huddle-console-unbuilt-"))
  })
  afterAll(() => rmSync(empty, { recursive: true, force: true }))

  it("says at / how to build it, with no stack, and has no assets", async () => {
    const handler = HttpApp.toWebHandler(Console.routes(Console.read(empty)))
    const page = await handler(new Request("http://localhost/"))
    expect(page.status).toBe(503)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-store")
    const text = await page.text()
    expect(text).toContain("npm run build")
    expect(text).not.toMatch(/\bat .*\(.*:\d+:\d+\)|Error:/)
    const asset = await handler(new Request("http://localhost/assets/app-X.js"))
    expect(asset.status).toBe(404)
  })

  it("says so too when the package cannot be found", async () => {
    const handler = HttpApp.toWebHandler(Console.routes(Console.read(undefined)))
    const text = await (await handler(new Request("http://localhost/"))).text()
    expect(text).toContain("@huddle/console is not installed")
    expect(text).toContain("npm run build")
  })
})
