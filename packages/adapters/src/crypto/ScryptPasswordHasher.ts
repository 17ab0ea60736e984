/**
 * Passwords hashed with scrypt (node:crypto), stored as `scrypt$N$r$p$salt$hash` so that the
 * parameters can be raised later without invalidating existing hashes.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { PasswordHasher } from "@huddle/domain/accounts/PasswordHasher"
import { Effect, Layer, Redacted } from "effect"

const params = { N: 16384, r: 8, p: 1 }
const keyLength = 32

const maxmem = 64 * 1024 * 1024

/** Parameters we would have written ourselves; anything else in a stored hash is refused. */
const saneParams = (N: number, r: number, p: number) =>
  Number.isInteger(N) && N >= 1024 && N <= 1 << 20 && (N & (N - 1)) === 0 &&
  Number.isInteger(r) && r >= 1 && r <= 32 && Number.isInteger(p) && p >= 1 && p <= 16 &&
  128 * N * r <= maxmem

const derive = (password: string, salt: Buffer, N: number, r: number, p: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, keyLength, { N, r, p, maxmem }, (error, key) => {
      resume(error ? Effect.die(error) : Effect.succeed(key))
    })
  })

export const make = PasswordHasher.of({
  hash: (password) =>
    Effect.gen(function*() {
      const salt = randomBytes(16)
      const key = yield* derive(Redacted.value(password), salt, params.N, params.r, params.p)
      return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
    }),
  verify: (password, stored) =>
    Effect.gen(function*() {
      const [scheme, N, r, p, salt, hash] = stored.split("$")
      if (scheme !== "scrypt" || !N || !r || !p || !salt || !hash) return false
      if (!saneParams(Number(N), Number(r), Number(p))) return false
      const expected = Buffer.from(hash, "base64")
      const actual = yield* derive(Redacted.value(password), Buffer.from(salt, "base64"), Number(N), Number(r), Number(p))
      return expected.length === actual.length && timingSafeEqual(expected, actual)
    })
})

export const layer = Layer.succeed(PasswordHasher, make)
