/**
 * MathAPI: stateless arithmetic. Its methods catch TypeError into fixed messages, so only the
 * Python result types (int stays int, a float anywhere makes a float, complex powers, Decimal and
 * mpmath results printed by repr) need care.
 */
import { type Api, dict, query } from "./api.ts"
import { decimalSqrt, mpLogRatio } from "./bignum.ts"
import { correctPow } from "./pow.ts"
import {
  float,
  isInt,
  isNumber,
  num,
  type Py,
  pyAdd,
  PyError,
  PyFloat,
  pyIn,
  pyIter,
  pyLen,
  pyMul,
  PyOpaque,
  pyPow,
  pyStr,
  pySub,
  pyTrueDiv,
  truthy,
  typeError,
  pyCompare,
  floatRepr,
  pyEq,
  typeName,
  PyDict
} from "./py.ts"

/** Runs `f`, turning a Python TypeError into `{"error": message}` (the API's `except TypeError`). */
const catchingTypeError = (message: string, f: () => Py): Py => {
  try {
    return f()
  } catch (e) {
    if (e instanceof PyError && e.pyClass === "TypeError") return dict({ error: message })
    throw e
  }
}

const pySum = (numbers: Py): Py => pyIter(numbers).reduce<Py>((acc, x) => pyAdd(acc, x), 0)

const complexRepr = (re: number, im: number): string => {
  const imText = `${floatRepr(im).replace(/\.0$/, "")}j`
  if (re === 0 && !Object.is(re, -0)) return imText
  const reText = floatRepr(re).replace(/\.0$/, "")
  return `(${reText}${im < 0 || Object.is(im, -0) ? "" : "+"}${imText})`
}

/** `base ** exponent` with Python's complex result for a negative base and fractional exponent. */
const power = (base: Py, exponent: Py): Py => {
  if (isNumber(base) && isNumber(exponent)) {
    const x = num(base)
    const y = num(exponent)
    if (x < 0 && !Number.isInteger(y) && Number.isFinite(y)) {
      const len = correctPow(Math.abs(x), y)
      const phase = Math.PI * y
      return new PyOpaque(complexRepr(len * Math.cos(phase), len * Math.sin(phase)), "complex")
    }
    if (isInt(base) && isInt(exponent) && y >= 0 && !Number.isSafeInteger(x ** y)) {
      // A Python int beyond 2^53, printed in full (CPython refuses to print more than 4300 digits)
      const digits = String(BigInt(x) ** BigInt(y))
      if (digits.replace("-", "").length > 4300) {
        throw new PyError("ValueError", "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit")
      }
      return new PyOpaque(digits, "int")
    }
  }
  return pyPow(base, exponent)
}

/** Python's `round(number, ndigits)`. */
const round = (number: Py, ndigits: Py): Py => {
  if (!isNumber(number)) throw typeError(`type ${typeName(number)} doesn't define __round__ method`)
  if (ndigits === null) {
    if (isInt(number)) return num(number)
    return roundHalfEven(number.value, 0)
  }
  if (!isInt(ndigits)) throw typeError(`'${typeName(ndigits)}' object cannot be interpreted as an integer`)
  const n = num(ndigits)
  if (isInt(number)) {
    const v = num(number)
    if (n >= 0) return v
    const p = 10 ** -n
    return roundHalfEven(v / p, 0) * p
  }
  const x = number.value
  if (!Number.isFinite(x) || (Number.isInteger(x) && n >= 0)) return number
  return float(roundFloat(x, n))
}

const roundHalfEven = (x: number, _: 0): number => {
  const f = Math.floor(x)
  const d = x - f
  if (d > 0.5) return f + 1
  if (d < 0.5) return f
  return f % 2 === 0 ? f : f + 1
}

/** `round(x, n)` for a float: correctly rounded to n places, exact ties to even, as CPython. */
export const roundFloat = (x: number, n: number): number => {
  if (n > 22) return x
  if (n >= 0) {
    const digits = Math.min(100, n + 40)
    const exact = Math.abs(x).toFixed(digits)
    const dot = exact.indexOf(".")
    const keep = exact.slice(0, dot + 1 + n)
    const rest = exact.slice(dot + 1 + n)
    let up = rest[0] !== undefined && rest[0] > "5" || (rest[0] === "5" && /[1-9]/.test(rest.slice(1)))
    if (rest[0] === "5" && !/[1-9]/.test(rest.slice(1))) {
      const last = keep.replace(".", "").slice(-1)
      up = Number(last) % 2 === 1
    }
    let r = Number(keep.endsWith(".") ? keep.slice(0, -1) : keep)
    if (up) r = Number((BigInt(keep.replace(".", "")) + 1n).toString().padStart(keep.replace(".", "").length, "0").replace(new RegExp(`(\\d{${n}})$`), n > 0 ? ".$1" : "$1"))
    return x < 0 || Object.is(x, -0) ? -r : r
  }
  const p = 10 ** -n
  const r = roundHalfEven(x / p, 0) * p
  // the sign of zero survives rounding, as in C
  return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r
}

const minMax = (numbers: Py, op: "<" | ">"): Py => {
  const items = pyIter(numbers)
  let best = items[0] as Py
  for (const item of items.slice(1)) if (pyCompare(op, item, best)) best = item
  return best
}

const toMeters: ReadonlyArray<readonly [string, Py]> = [["km", 1000], ["m", 1], ["cm", float(0.01)], ["mm", float(0.001)], ["um", float(1e-6)], ["nm", float(1e-9)]]
const toMetersDict = PyDict.of(toMeters)
const fromMetersDict = PyDict.of(toMeters.map(([u, f]) => [u, pyTrueDiv(1, f)] as const))

const imperial = PyDict.fromRecord({
  cm_to_in: float(0.393701),
  in_to_cm: float(2.54),
  m_to_ft: float(3.28084),
  ft_to_m: float(0.3048),
  m_to_yd: float(1.09361),
  yd_to_m: float(0.9144),
  km_to_miles: float(0.621371),
  miles_to_km: float(1.60934),
  kg_to_lb: float(2.20462),
  lb_to_kg: float(0.453592),
  celsius_to_fahrenheit: float(1.8),
  fahrenheit_to_celsius: float(5 / 9)
})

const overflowGuard = (f: () => Py): Py => {
  const r = f()
  if (r instanceof PyFloat && !Number.isFinite(r.value)) {
    return dict({ error: "Conversion resulted in a value too large to represent" })
  }
  return r
}

const unsupported = (a: Py, b: Py) => dict({ error: `Conversion from '${pyStr(a)}' to '${pyStr(b)}' is not supported` })

export const MathAPI: Api<null> = {
  name: "MathAPI",
  load: () => null,
  publicState: () => [],
  methods: {
    logarithm: query(["value", "base", "precision"], (_, value, base, precision) => mpLogRatio(value, base, precision)),
    mean: query(["numbers"], (_, numbers) => {
      if (!truthy(numbers)) return dict({ error: "Cannot calculate mean of an empty list" })
      return catchingTypeError("All elements in the list must be numbers", () => dict({ result: pyTrueDiv(pySum(numbers), pyLen(numbers)) }))
    }),
    standard_deviation: query(["numbers"], (_, numbers) => {
      if (!truthy(numbers)) return dict({ error: "Cannot calculate standard deviation of an empty list" })
      return catchingTypeError("All elements in the list must be numbers", () => {
        const mean = pyTrueDiv(pySum(numbers), pyLen(numbers))
        const squares = pyIter(numbers).map((x) => pyPow(pySub(x, mean), 2))
        const variance = pyTrueDiv(pySum(squares), pyLen(numbers))
        if (variance.value < 0) throw new PyError("ValueError", "math domain error")
        return dict({ result: float(Math.sqrt(variance.value)) })
      })
    }),
    si_unit_conversion: query(["value", "unit_in", "unit_out"], (_, value, unitIn, unitOut) => {
      if (!isNumber(value)) return dict({ error: "Value must be a number" })
      if (!pyIn(unitIn, toMetersDict) || !pyIn(unitOut, fromMetersDict)) return unsupported(unitIn, unitOut)
      return overflowGuard(() => dict({ result: pyMul(pyMul(value, toMetersDict.item(unitIn)), fromMetersDict.item(unitOut)) }))
    }),
    imperial_si_conversion: query(["value", "unit_in", "unit_out"], (_, value, unitIn, unitOut) => {
      if (!isNumber(value)) return dict({ error: "Value must be a number" })
      if (pyEq(unitIn, unitOut)) return dict({ result: value })
      const key = `${pyStr(unitIn)}_to_${pyStr(unitOut)}`
      if (!imperial.has(key)) return unsupported(unitIn, unitOut)
      const factor = imperial.item(key)
      if (pyEq(unitIn, "celsius") && pyEq(unitOut, "fahrenheit")) return dict({ result: pyAdd(pyMul(value, factor), 32) })
      if (pyEq(unitIn, "fahrenheit") && pyEq(unitOut, "celsius")) return dict({ result: pyMul(pySub(value, 32), factor) })
      return dict({ result: pyMul(value, factor) })
    }),
    add: query(["a", "b"], (_, a, b) => catchingTypeError("Both inputs must be numbers", () => dict({ result: pyAdd(a, b) }))),
    subtract: query(["a", "b"], (_, a, b) => catchingTypeError("Both inputs must be numbers", () => dict({ result: pySub(a, b) }))),
    multiply: query(["a", "b"], (_, a, b) => {
      if (!isNumber(a) || !isNumber(b)) return dict({ error: "Both inputs must be numbers" })
      return dict({ result: pyMul(a, b) })
    }),
    divide: query(["a", "b"], (_, a, b) =>
      catchingTypeError("Both inputs must be numbers", () => {
        if (pyEq(b, 0)) return dict({ error: "Cannot divide by zero" })
        return dict({ result: pyTrueDiv(a, b) })
      })),
    power: query(["base", "exponent"], (_, base, exponent) => catchingTypeError("Both inputs must be numbers", () => dict({ result: power(base, exponent) }))),
    square_root: query(["number", "precision"], (_, number, precision) =>
      catchingTypeError("Input must be a number or computation resulted in an invalid operation", () => {
        if (pyCompare("<", number, 0)) return dict({ error: "Cannot calculate square root of a negative number" })
        return dict({ result: decimalSqrt(number, precision) })
      })),
    absolute_value: query(["number"], (_, number) =>
      catchingTypeError("Input must be a number", () => {
        if (!isNumber(number)) throw typeError(`bad operand type for abs(): '${typeName(number)}'`)
        return dict({ result: number instanceof PyFloat ? float(Math.abs(number.value)) : Math.abs(num(number)) })
      })),
    round_number: query(["number", ["decimal_places", 0]], (_, number, places) =>
      catchingTypeError("First input must be a number, second input must be an integer", () => dict({ result: round(number, places) }))),
    percentage: query(["part", "whole"], (_, part, whole) =>
      catchingTypeError("Both inputs must be numbers", () => {
        if (pyEq(whole, 0)) return dict({ error: "Whole value cannot be zero" })
        return dict({ result: pyMul(pyTrueDiv(part, whole), 100) })
      })),
    min_value: query(["numbers"], (_, numbers) => {
      if (!truthy(numbers)) return dict({ error: "Cannot find minimum of an empty list" })
      return catchingTypeError("All elements in the list must be numbers", () => dict({ result: minMax(numbers, "<") }))
    }),
    max_value: query(["numbers"], (_, numbers) => {
      if (!truthy(numbers)) return dict({ error: "Cannot find maximum of an empty list" })
      return catchingTypeError("All elements in the list must be numbers", () => dict({ result: minMax(numbers, ">") }))
    }),
    sum_values: query(["numbers"], (_, numbers) => {
      if (!truthy(numbers)) return dict({ error: "Cannot calculate sum of an empty list" })
      return catchingTypeError("All elements in the list must be numbers", () => dict({ result: pySum(numbers) }))
    })
  }
}
