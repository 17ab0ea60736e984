/** A repository's status: where it comes from, how far indexing is, what was indexed and what was skipped and why. */
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
                {skipped.map(([reason, count]) => <li key={reason}>{count} {count === 1 ? "file" : "files"}: {skipReasons[reason]}</li>)}
              </ul>
            )}
        </>
      )}
    </>
  )
}
