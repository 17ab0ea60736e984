/** Audit events as rows a person reads: when, what, about whom or what, by whom. */
import { Time } from "../../ui/Time.js"
import { actor, describe, eventTypeNames } from "./auditText.js"
import type { AuditEvent } from "./wire.js"

export const AuditTable = ({ events, you }: { readonly events: ReadonlyArray<AuditEvent>; readonly you: string }) => (
  <table class="keys audit">
    <thead>
      <tr>
        <th scope="col">When</th>
        <th scope="col">What</th>
        <th scope="col">Details</th>
        <th scope="col">By</th>
      </tr>
    </thead>
    <tbody>
      {events.map((event) => (
        <tr key={event.id}>
          <td data-label="When"><Time at={event.created_at} /></td>
          <th scope="row" data-label="What">{eventTypeNames[event.event_type]}</th>
          <td data-label="Details">{describe(event)}</td>
          <td data-label="By">{actor(event, you)}</td>
        </tr>
      ))}
    </tbody>
  </table>
)
