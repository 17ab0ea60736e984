/** Size limits of the wire contract, shared by the REST groups, JSON-RPC and their documentation. */

/** The longest input a huddle message (or a JSON-RPC intent) accepts (characters). */
export const maxInputLength = 32_000
