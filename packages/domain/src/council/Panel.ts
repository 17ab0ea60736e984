/**
 * Who sits on a council: `size` seats from the tier's models, one per provider first, then the
 * tier's other models, then (a tier with fewer models than seats) the same models again, each
 * seat with its own perspective (`Protocol.perspectives`). The offline models sit only when the
 * tier has nothing else: beside a real model they would only restate the question.
 */
import type { CatalogModel } from "../models/Model.js"

export const minSeats = 2
export const maxSeats = 4

export const seatsFrom = (models: ReadonlyArray<CatalogModel>, size: number): ReadonlyArray<CatalogModel> => {
  const real = models.filter((model) => model.provider !== "offline")
  const pool = real.length > 0 ? real : models
  if (pool.length === 0) return []
  const seen = new Set<string>()
  const ordered: Array<CatalogModel> = []
  const providers = new Set<string>()
  for (const model of pool) {
    if (!providers.has(model.provider) && !seen.has(model.id)) {
      providers.add(model.provider)
      seen.add(model.id)
      ordered.push(model)
    }
  }
  for (const model of pool) {
    if (!seen.has(model.id)) {
      seen.add(model.id)
      ordered.push(model)
    }
  }
  const count = Math.min(maxSeats, Math.max(minSeats, size))
  return Array.from({ length: count }, (_, i) => ordered[i % ordered.length]!)
}
