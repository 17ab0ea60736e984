/**
 * Sealing of kept idempotent answers (docs/decisions/0012-idempotency.md): AES-256-GCM under a key
 * derived from the credential's bearer secret, bound to the request's fingerprint, so that the
 * table of kept answers gives away neither answers nor API keys shown once, and an answer opens
 * only for the same credential and the same request.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"

const sealVersion = 1

/** The sealing key of a credential: its bearer secret through HMAC, so never derivable from its stored hash. */
export const sealingKey = (secret: string): Buffer =>
  createHmac("sha256", secret).update("huddle/idempotency/seal/v1").digest()

/** AES-256-GCM, bound to the request's fingerprint: `[version][iv][tag][ciphertext]`. */
export const seal = (key: Buffer, fingerprint: string, plain: Uint8Array): Uint8Array => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(fingerprint))
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()])
  return Buffer.concat([Buffer.of(sealVersion), iv, cipher.getAuthTag(), ciphertext])
}

/** The plain bytes, or undefined when they were not sealed with this key for this fingerprint. */
export const unseal = (key: Buffer, fingerprint: string, sealed: Uint8Array): Uint8Array | undefined => {
  const buffer = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength)
  if (buffer.length < 29 || buffer[0] !== sealVersion) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, buffer.subarray(1, 13)).setAAD(Buffer.from(fingerprint))
    decipher.setAuthTag(buffer.subarray(13, 29))
    return Buffer.concat([decipher.update(buffer.subarray(29)), decipher.final()])
  } catch {
    return undefined
  }
}
