/**
 * Per-question difficulty for the simulated participants: a one-parameter item-response model.
 * Each question has a difficulty `d = spread × z`, z a standard normal drawn from the seed and the
 * question; a participant of skill θ is right on it with chance `σ(θ − d)` (σ the logistic
 * function). θ is chosen so that this chance, averaged over questions, is the participant's stated
 * accuracy: the participants keep their accuracies, but their errors gather on the same hard
 * questions, across seats and across one model's repeated samples, as real models' do.
 * A spread of 0 gives every question the same chance: the stated accuracy.
 */
import { keyed } from "./Prng.js"

const logistic = (x: number) => 1 / (1 + Math.exp(-x))

/** A standard normal grid for the average over questions: z in [−8, 8], weighted by its density. */
const grid: ReadonlyArray<readonly [number, number]> = (() => {
  const points = Array.from({ length: 1601 }, (_, i) => -8 + i * 0.01).map((z) => [z, Math.exp((-z * z) / 2)] as const)
  const total = points.reduce((sum, [, w]) => sum + w, 0)
  return points.map(([z, w]) => [z, w / total] as const)
})()

const averageChance = (skill: number, spread: number) => grid.reduce((sum, [z, w]) => sum + w * logistic(skill - spread * z), 0)

const skills = new Map<string, number>()

/** The skill θ whose chance, averaged over questions of this spread, is `accuracy` (in (0, 1)). */
export const skillOf = (accuracy: number, spread: number): number => {
  const key = `${accuracy}|${spread}`
  const known = skills.get(key)
  if (known !== undefined) return known
  let lo = -40
  let hi = 40
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2
    if (averageChance(mid, spread) < accuracy) lo = mid
    else hi = mid
  }
  const skill = (lo + hi) / 2
  skills.set(key, skill)
  return skill
}

/** The question's z: a standard normal, the same for every participant and regime of a seed. */
export const zOf = (seed: number, question: number): number => {
  const rng = keyed(seed, "difficulty", question)
  const u = 1 - rng.next()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next())
}

/** The chance that a participant of average `accuracy` is right on the question of `z`. */
export const chance = (accuracy: number, spread: number, z: number): number => {
  if (spread === 0 || accuracy <= 0 || accuracy >= 1) return accuracy
  return logistic(skillOf(accuracy, spread) - spread * z)
}
