/**
 * A simulated API as a world: its state an immutable value, loaded from a task's initial config,
 * and each public method a pure function (state, arguments) → { output, error, state }.
 */
import type { PublicState } from "./canon.ts"
import { type Py, PyDict, PyError } from "./py.ts"

/** Upstream's `long_context.py` constants by name (read from the data folder, not kept in the repo). */
export type LongContext = PyDict

/** A parameter: its name, and its default when it has one. */
export type Param = string | readonly [string, Py]

export interface Outcome<S> {
  /** The method's return value (undefined when it raised). */
  readonly output?: Py
  /** The exception it raised, with the state as it was left when it raised. */
  readonly error?: PyError
  readonly state: S
}

export interface Method<S> {
  readonly params: ReadonlyArray<Param>
  /** Arguments bound to `params`, in their order. A thrown PyError leaves the state unchanged. */
  run(state: S, args: ReadonlyArray<Py>): Outcome<S>
}

export interface Api<S> {
  readonly name: string
  /** `_load_scenario(config, long_context)` on a fresh instance (MathAPI: the fresh instance). */
  load(config: PyDict, longContext: LongContext | undefined): S
  /** `vars(instance)` minus names starting with `_`, in order. */
  publicState(state: S): PublicState
  readonly methods: Readonly<Record<string, Method<S>>>
  /**
   * Upstream shares some long-context objects between every instance of a process (TravelAPI puts
   * the module's extension cards themselves in its card list, and charges them in place). Given the
   * state at the end of a session, the constants as the next instance of the process will see them.
   */
  shareBack?(state: S, longContext: LongContext): LongContext
}

/** A method whose result does not change the state. */
export const query = <S>(params: ReadonlyArray<Param>, f: (state: S, ...args: Array<Py>) => Py): Method<S> => ({
  params,
  run: (state, args) => ({ output: f(state, ...args), state })
})

/** A method that returns a new state beside its output. */
export const command = <S>(params: ReadonlyArray<Param>, f: (state: S, ...args: Array<Py>) => readonly [Py, S]): Method<S> => ({
  params,
  run: (state, args) => {
    const [output, next] = f(state, ...args)
    return { output, state: next }
  }
})

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * A method written as upstream's is, assigning attributes of a draft (a shallow copy: the values
 * in it are immutable). An exception keeps the assignments made before it, as Python does.
 */
export const mutating = <S extends object>(params: ReadonlyArray<Param>, f: (draft: Mutable<S>, ...args: Array<Py>) => Py): Method<S> => ({
  params,
  run: (state, args) => {
    const draft: Mutable<S> = { ...state }
    const settle = (): S => ((Object.keys(draft) as Array<keyof S>).every((k) => draft[k] === state[k]) ? state : draft)
    try {
      const output = f(draft, ...args)
      return { output, state: settle() }
    } catch (e) {
      if (e instanceof PyError) return { error: e, state: settle() }
      throw e
    }
  }
})

/** A dict literal with str keys, in order (most methods return one). */
export const dict = (r: Readonly<Record<string, Py>>): PyDict => PyDict.fromRecord(r)

/** `scenario.get(key, default)`. */
export const getOr = (config: PyDict, key: string, fallback: Py): Py => {
  const v = config.get(key)
  return v === undefined ? fallback : v
}

/** Any class's world: members are methods, so their parameters compare bivariantly. */
export type AnyApi = Api<unknown>
