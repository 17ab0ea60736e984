/** FNV-1a over UTF-16 code units: a short deterministic hash for the offline model's choices and ids. */
export const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}
