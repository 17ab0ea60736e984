/**
 * A repository's status: where it comes from, how far indexing is, what was indexed and what was
 * skipped and why, each reason opening onto its paths (the first 100 the server names).
 */
import { Time } from "../../ui/Time.js"
import { skipReasons, type Status, statusWords } from "./wire.js"

const categories = { source: "source", test: "tests", docs: "docs", config: "configuration" } as const

export const RepositoryStatus = ({ status }: { readonly status: Status }) => {
  const running = status.status === "pending" || status.status === "indexing"
  const skipped = status.skipped === null
    ? []
    : Object.entries(status.skipped.by_reason).filter(([, count]) => count > 0) as Array<[keyof typeof skipReasons, number]>
  return (
    <>
      <dl class="facts">
        <dt>Source</dt>
        <dd><code>{status.path ?? status.git_url}</code></dd>
        <dt>Status</dt>
        <dd class={`state ${status.status}`}>{statusWords[status.status]}</dd>
        {running || status.status === "failed"
          ? (
            <>
              <dt>Progress</dt>
              <dd>{status.progress.seen} files looked at: {status.progress.indexed} indexed, {status.progress.skipped} skipped</dd>
            </>
          )
          : null}
        {status.error === null ? null : (
          <>
            <dt>Why it failed</dt>
            <dd>{status.error}</dd>
          </>
        )}
        {status.finished_at === null ? null : (
          <>
            <dt>Last indexed</dt>
            <dd><Time at={status.finished_at} /></dd>
          </>
        )}
        {status.files === null ? null : (
          <>
            <dt>Indexed files</dt>
            <dd>
              {status.files.total}
              {status.files.total === 0 ? null : ` (${
                Object.entries(status.files.by_category).filter(([, n]) => n > 0).map(([category, n]) =>
                  `${n} ${categories[category as keyof typeof categories]}`
                ).join(", ")
              })`}
            </dd>
          </>
        )}
      </dl>
      <p class="notice" role="status">
        {status.status === "pending" ? "Waiting for the indexer…" : status.status === "indexing" ? `Indexing: ${status.progress.seen} files so far…` : ""}
      </p>
      {status.skipped === null ? null : (
        <>
          <h3>Skipped files</h3>
          {skipped.length === 0
            ? <p class="empty">None: every file was indexed.</p>
            : (
              <ul class="skipped">
                {skipped.map(([reason, count]) => <SkippedReason key={reason} reason={reason} count={count} paths={status.skipped?.paths[reason] ?? []} />)}
              </ul>
            )}
        </>
      )}
    </>
  )
}

/** One reason files were skipped: how many, and their paths, folded away until asked for. */
const SkippedReason = ({ reason, count, paths }: {
  readonly reason: keyof typeof skipReasons
  readonly count: number
  readonly paths: ReadonlyArray<string>
}) => (
  <li>
    <details>
      <summary>{count} {count === 1 ? "file" : "files"}: {skipReasons[reason]}</summary>
      <ul class="skipped-paths" aria-label={`Skipped as ${skipReasons[reason]}`}>
        {paths.map((path) => <li key={path}><code>{path}</code></li>)}
      </ul>
      {count > paths.length ? <p class="hint">The first {paths.length} of {count}.</p> : null}
    </details>
  </li>
)
