/** `--rate PROVIDER=N/s` as text (no library loaded: the command parses it at start-up). */
export interface RateSpec {
  readonly provider: string
  readonly perSecond: number
}

/** `openai=20/s` → { provider: "openai", perSecond: 20 }, or null when it is not of that form. */
export const parseRate = (text: string): RateSpec | null => {
  const m = /^([a-z0-9_-]+)=(\d+)\/s$/i.exec(text)
  if (m === null || Number(m[2]) < 1) return null
  return { provider: m[1]!, perSecond: Number(m[2]) }
}
