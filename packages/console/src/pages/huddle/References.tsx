/**
 * The passages an answer is grounded in, each a link to the file page at its lines. Without a
 * workspace there is no file page to go to, and the passage is named only.
 */
import type { Reference } from "./wire.js"

/** `#/files/<workspace>/<path…>?lines=<start>-<end>`: each segment of the path encoded on its own. */
export const fileHref = (workspaceId: string, reference: Reference): string =>
  `#/files/${[workspaceId, ...reference.path.split("/")].map(encodeURIComponent).join("/")}?${new URLSearchParams({ lines: `${reference.start_line}-${reference.end_line}` })}`

export const References = ({ references, workspaceId }: { readonly references: ReadonlyArray<Reference>; readonly workspaceId: string | null }) =>
  references.length === 0 ? null : (
    <div class="references">
      <h4>References</h4>
      <ul>
        {references.map((reference) => {
          const where = `${reference.path}, lines ${reference.start_line}–${reference.end_line}`
          return (
            <li key={where}>
              {workspaceId === null ? <code>{where}</code> : <a href={fileHref(workspaceId, reference)}><code>{where}</code></a>}
              {reference.why === undefined ? null : <span class="hint"> — {reference.why}</span>}
            </li>
          )
        })}
      </ul>
    </div>
  )
