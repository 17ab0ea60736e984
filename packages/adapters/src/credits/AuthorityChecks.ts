/**
 * The conditions of the revocation rule (decision 0015) as SQL, for the reservation statement and
 * for the read that confirms a reservation from a lease (decisions 0021, 0041, `AuthorityReads`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { NewReservation } from "@huddle/domain/credits/CreditStore"

/** Whether the credential still stands (not revoked; a session also not expired). */
export const credentialOk = (sql: SqlClient.SqlClient, reservation: NewReservation) => {
  const authority = reservation.authority
  if (authority === undefined) return sql`true`
  return authority.via === "api_key"
    ? sql`EXISTS (SELECT 1 FROM api_keys WHERE id = ${authority.credentialId} AND user_id = ${authority.actorId} AND revoked_at IS NULL)`
    : sql`EXISTS (SELECT 1 FROM web_sessions WHERE id = ${authority.credentialId} AND user_id = ${authority.actorId}
                  AND revoked_at IS NULL AND expires_at > now())`
}

/** Whether the payer (and the actor) are still active members of the org context. */
export const memberOk = (sql: SqlClient.SqlClient, reservation: NewReservation) => {
  if (reservation.orgId === null) return sql`true`
  const users = [...new Set([reservation.userId, ...(reservation.authority ? [reservation.authority.actorId] : [])])]
  return sql`(SELECT count(*) FROM memberships WHERE org_id = ${reservation.orgId} AND status = 'active'
              AND user_id IN ${sql.in(users)}) = ${users.length}`
}
