/**
 * What the server says once it is ready: the addresses a person opens first — the web console,
 * the API reference, the OpenAPI document, the probes — in the `huddle ready` log line and, at a
 * terminal, as a plain banner.
 */

/** The addresses under `url` (`http://host:port`, no trailing slash). */
export const addresses = (url: string) => ({
  url,
  console: `${url}/`,
  docs: `${url}/docs`,
  openapi: `${url}/v1/openapi.json`
})

/** The banner for a person at a terminal. */
export const banner = (url: string, storage: string): string => {
  const at = addresses(url)
  return [
    "",
    `Huddle is ready at ${url} (storage: ${storage})`,
    `  Web console:   ${at.console}`,
    `  API reference: ${at.docs}`,
    `  OpenAPI:       ${at.openapi}`,
    `  Health:        ${url}/healthz  ${url}/readyz`,
    ""
  ].join("\n")
}
