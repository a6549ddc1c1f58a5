/** A count with its noun, singular for one: "1 task", "3 tasks". */
export const counted = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`
