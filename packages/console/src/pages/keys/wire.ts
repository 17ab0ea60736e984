/** The keys page's data, as the typed client answers it. */
import type { Answer } from "../../answer.js"
import type { Client } from "../../api.js"

export type KeyPage = Answer<Client["apiKeys"]["list"]>
export type ApiKey = KeyPage["data"][number]
export type CreatedKey = Answer<Client["apiKeys"]["create"]>
export type Membership = Answer<Client["me"]["me"]>["orgs"][number]
