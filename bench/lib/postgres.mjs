/** A database of the benchmark's own on the local PostgreSQL server (loopback only), dropped afterwards. */
import { randomBytes } from "node:crypto"
import pg from "pg"

export const adminUrl = () => process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const loopback = new Set(["127.0.0.1", "localhost", "[::1]", "::1"])

const withAdmin = async (f) => {
  const url = new URL(adminUrl())
  if (!loopback.has(url.hostname)) throw new Error(`the benchmark only talks to a PostgreSQL server on loopback, not ${url.hostname}`)
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

export const create = async () => {
  const name = `huddle_bench_${randomBytes(5).toString("hex")}`
  const version = await withAdmin(async (client) => {
    await client.query(`CREATE DATABASE ${name}`)
    return (await client.query("SHOW server_version")).rows[0].server_version
  })
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  return { name, url: url.toString(), version, drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) }
}

/** Runs one query on a database of the benchmark (for the ledger check after the run). */
export const query = async (url, text, values) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}
