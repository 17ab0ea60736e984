/**
 * The file view, `#/files/<workspace>/<path>?lines=<start>-<end>`: an indexed file of the
 * workspace's repository, as the index stored it (what answers were grounded in), with the cited
 * lines highlighted. Whoever may use the workspace may read it; for anyone else, and for a path
 * the index does not hold, the server answers that there is no such file.
 */
import { href, useLocation } from "../../route.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useResource } from "../../ui/useApi.js"
import { CodeView } from "./CodeView.js"
import { citedLines, firstLineFor } from "./lines.js"

export const FilePage = () => {
  const { query, segments } = useLocation()
  const [workspaceId = "", ...rest] = segments
  // A path may come as one encoded segment or as several: either way it is the rest, joined.
  const path = rest.join("/")
  const cited = citedLines(query)
  const key = `${workspaceId}\u0000${path}\u0000${cited?.start ?? ""}`
  if (workspaceId === "" || path === "") {
    return (
      <Page title="File">
        <p class="problem" role="alert">This address names no file. <a href={href("repository")}>Open one from your repositories</a>.</p>
      </Page>
    )
  }
  return <FileOf key={key} workspaceId={workspaceId} path={path} cited={cited} />
}

const FileOf = ({ cited, path, workspaceId }: { readonly workspaceId: string; readonly path: string; readonly cited: ReturnType<typeof citedLines> }) => {
  const [file] = useResource((client) =>
    client.workspaces.file({ path: { id: workspaceId }, urlParams: { path, from: firstLineFor(cited) } })
  )
  return (
    <Page title={path}>
      <p><a href={href("repository")}>Back to repositories</a></p>
      {file._tag === "Loading" ? <Loading what={path} /> : null}
      {file._tag === "Failed" ? <ProblemNote problem={file.problem} /> : null}
      {file._tag === "Loaded"
        ? (
          <>
            <p class="hint">
              {file.value.language} · {file.value.total_lines} {file.value.total_lines === 1 ? "line" : "lines"}
              {file.value.start_line > 1 || file.value.end_line < file.value.total_lines
                ? ` · showing lines ${file.value.start_line}–${file.value.end_line}`
                : null}
            </p>
            {cited === null ? null : (
              <p class="notice" role="status">
                {cited.start > file.value.total_lines
                  ? `The cited lines ${cited.start}–${cited.end} are past the end of the file as indexed now.`
                  : cited.start === cited.end
                  ? `Line ${cited.start} is highlighted.`
                  : `Lines ${cited.start}–${Math.min(cited.end, file.value.total_lines)} are highlighted.`}
              </p>
            )}
            {file.value.total_lines === 0
              ? <p class="empty">The file is empty.</p>
              : <CodeView path={file.value.path} text={file.value.text} firstLine={file.value.start_line} cited={cited} />}
          </>
        )
        : null}
    </Page>
  )
}
