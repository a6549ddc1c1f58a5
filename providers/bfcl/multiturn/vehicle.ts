/**
 * VehicleControlAPI: a car's engine, doors, climate, brakes, cruise control and navigation.
 * Speeds and outside temperatures are drawn from the instance's `random.Random`; long-context
 * tasks add upstream's long texts to some results.
 */
import { type Api, dict, getOr, type LongContext, mutating, query } from "./api.ts"
import {
  float,
  type Py,
  pyAdd,
  pyCompare,
  PyDict,
  pyEq,
  pyIn,
  pyIter,
  pyMul,
  pySub,
  pyTrueDiv,
  toFloat,
  truthy,
  typeError,
  typeName
} from "./py.ts"
import { PyRandom } from "./random.ts"

export interface VehicleState {
  readonly fuelLevel: Py
  readonly batteryVoltage: Py
  readonly engine_state: Py
  readonly remainingUnlockedDoors: Py
  readonly doorStatus: Py
  readonly acTemperature: Py
  readonly fanSpeed: Py
  readonly acMode: Py
  readonly humidityLevel: Py
  readonly headLightStatus: Py
  readonly parkingBrakeStatus: Py
  readonly parkingBrakeForce: Py
  readonly slopeAngle: Py
  readonly brakePedalStatus: Py
  readonly brakePedalForce: Py
  readonly distanceToNextVehicle: Py
  readonly cruiseStatus: Py
  readonly destination: Py
  readonly frontLeftTirePressure: Py
  readonly frontRightTirePressure: Py
  readonly rearLeftTirePressure: Py
  readonly rearRightTirePressure: Py
  readonly long_context: boolean
  readonly extension: LongContext | undefined
  readonly random: PyRandom
}

const asDict = (v: Py): PyDict => {
  if (v instanceof PyDict) return v
  throw typeError(`'${typeName(v)}' object is not subscriptable`)
}

const ext = (s: VehicleState, name: string): Py => s.extension?.get(name) ?? null

/** `lo <= x <= hi`, Python's chained comparison (the second only if the first holds). */
const between = (lo: number, x: Py, hi: number): boolean => pyCompare("<=", lo, x) && pyCompare("<=", x, hi)

const distances: ReadonlyArray<readonly [string, string, number]> = [
  ["83214", "74532", 750],
  ["56108", "62947", 320],
  ["71354", "83462", 450],
  ["47329", "52013", 290],
  ["69238", "51479", 630],
  ["94016", "83214", 980],
  ["94016", "94704", 600],
  ["94704", "08540", 2550],
  ["94016", "08540", 1950],
  ["62947", "47329", 1053],
  ["94016", "62947", 780],
  ["74532", "94016", 880]
]

const zipcodes: Readonly<Record<string, string>> = {
  Rivermist: "83214",
  Stonebrook: "74532",
  Maplecrest: "56108",
  Silverpine: "62947",
  Shadowridge: "71354",
  "Sunset Valley": "83462",
  Oakendale: "47329",
  Willowbend: "52013",
  "Crescent Hollow": "69238",
  Autumnville: "51479",
  "San Francisco": "94016"
}

const doorsSet = (door: Py, unlock: boolean, draft: { doorStatus: Py; remainingUnlockedDoors: Py }): void => {
  const target = unlock ? "unlocked" : "locked"
  for (const d of pyIter(door)) {
    const doors = asDict(draft.doorStatus)
    if (pyEq(doors.item(d), target)) continue
    draft.doorStatus = doors.set(d, target)
    draft.remainingUnlockedDoors = unlock ? pyAdd(draft.remainingUnlockedDoors, 1) : pySub(draft.remainingUnlockedDoors, 1)
  }
}

export const VehicleControlAPI: Api<VehicleState> = {
  name: "VehicleControlAPI",
  load: (config, longContext) => {
    const doorStatus = getOr(config, "doorStatus", PyDict.fromRecord({ driver: "unlocked", passenger: "unlocked", rear_left: "unlocked", rear_right: "unlocked" }))
    const doors = asDict(doorStatus)
    const seed = getOr(config, "random_seed", 141053)
    return {
      fuelLevel: getOr(config, "fuelLevel", float(0)),
      batteryVoltage: getOr(config, "batteryVoltage", float(12.6)),
      engine_state: getOr(config, "engineState", "stopped"),
      remainingUnlockedDoors: 4 - doors.keys().filter((k) => pyEq(doors.item(k), "locked")).length,
      doorStatus,
      acTemperature: getOr(config, "acTemperature", float(25)),
      fanSpeed: getOr(config, "fanSpeed", 50),
      acMode: getOr(config, "acMode", "auto"),
      humidityLevel: getOr(config, "humidityLevel", float(50)),
      headLightStatus: getOr(config, "headLightStatus", "off"),
      parkingBrakeStatus: getOr(config, "parkingBrakeStatus", "released"),
      parkingBrakeForce: getOr(config, "parkingBrakeForce", float(0)),
      slopeAngle: getOr(config, "slopeAngle", float(0)),
      brakePedalStatus: getOr(config, "brakePedalStatus", "released"),
      brakePedalForce: getOr(config, "brakePedalForce", float(0)),
      distanceToNextVehicle: getOr(config, "distanceToNextVehicle", float(50)),
      cruiseStatus: getOr(config, "cruiseStatus", "inactive"),
      destination: getOr(config, "destination", "None"),
      frontLeftTirePressure: getOr(config, "frontLeftTirePressure", float(32)),
      frontRightTirePressure: getOr(config, "frontRightTirePressure", float(32)),
      rearLeftTirePressure: getOr(config, "rearLeftTirePressure", float(30)),
      rearRightTirePressure: getOr(config, "rearRightTirePressure", float(30)),
      long_context: longContext !== undefined,
      extension: longContext,
      random: PyRandom.seeded(typeof seed === "number" ? seed : 141053)
    }
  },
  publicState: (s) => [
    ["fuelLevel", s.fuelLevel],
    ["batteryVoltage", s.batteryVoltage],
    ["engine_state", s.engine_state],
    ["remainingUnlockedDoors", s.remainingUnlockedDoors],
    ["doorStatus", s.doorStatus],
    ["acTemperature", s.acTemperature],
    ["fanSpeed", s.fanSpeed],
    ["acMode", s.acMode],
    ["humidityLevel", s.humidityLevel],
    ["headLightStatus", s.headLightStatus],
    ["parkingBrakeStatus", s.parkingBrakeStatus],
    ["brakePedalStatus", s.brakePedalStatus],
    ["distanceToNextVehicle", s.distanceToNextVehicle],
    ["cruiseStatus", s.cruiseStatus],
    ["destination", s.destination],
    ["frontLeftTirePressure", s.frontLeftTirePressure],
    ["frontRightTirePressure", s.frontRightTirePressure],
    ["rearLeftTirePressure", s.rearLeftTirePressure],
    ["rearRightTirePressure", s.rearRightTirePressure],
    ["long_context", s.long_context]
  ],
  methods: {
    startEngine: mutating<VehicleState>(["ignitionMode"], (d, mode) => {
      if (pyEq(mode, "STOP")) d.engine_state = "stopped"
      if (pyCompare(">", d.remainingUnlockedDoors, 0)) {
        const unlocked = asDict(d.doorStatus).entries().filter(([, st]) => pyEq(st, "unlocked")).map(([door]) => door)
        const bad = unlocked.find((x) => typeof x !== "string")
        if (bad !== undefined) throw typeError(`sequence item ${unlocked.indexOf(bad)}: expected str instance, ${typeName(bad)} found`)
        return dict({ error: "All doors must be locked before starting the engine. Here are the unlocked doors: " + unlocked.join(", ") })
      }
      if (!pyEq(d.brakePedalStatus, "pressed")) return dict({ error: "Brake pedal needs to be pressed when starting the engine." })
      if (!pyEq(d.brakePedalForce, float(1000))) return dict({ error: "Must press the brake fully before starting the engine." })
      if (pyCompare("<", d.fuelLevel, float(0))) return dict({ error: "Fuel tank is empty." })
      if (!pyEq(mode, "START")) return dict({ error: "Invalid ignition mode." })
      d.engine_state = "running"
      return dict({ engineState: d.engine_state, fuelLevel: d.fuelLevel, batteryVoltage: d.batteryVoltage })
    }),
    fillFuelTank: mutating<VehicleState>(["fuelAmount"], (d, amount) => {
      if (pyCompare("<", amount, 0)) return dict({ error: "Fuel amount cannot be negative." })
      if (pyCompare(">", pyAdd(d.fuelLevel, amount), 50)) return dict({ error: "Cannot fill gas above the tank capacity." })
      if (pyCompare("<", pyAdd(d.fuelLevel, amount), float(0))) return dict({ error: "Fuel tank is empty. Min fuel level is 0 gallons." })
      d.fuelLevel = pyAdd(d.fuelLevel, amount)
      return dict({ fuelLevel: d.fuelLevel })
    }),
    lockDoors: mutating<VehicleState>(["unlock", "door"], (d, unlock, door) => {
      const u = truthy(unlock)
      doorsSet(door, u, d)
      return dict({ lockStatus: u ? "unlocked" : "locked", remainingUnlockedDoors: d.remainingUnlockedDoors })
    }),
    adjustClimateControl: mutating<VehicleState>(["temperature", ["unit", "celsius"], ["fanSpeed", 50], ["mode", "auto"]], (d, temperature, unit, fanSpeed, mode) => {
      if (!between(0, fanSpeed, 100)) return dict({ error: "Fan speed must be between 0 and 100." })
      d.acTemperature = temperature
      if (pyEq(unit, "fahrenheit")) d.acTemperature = pyTrueDiv(pyMul(pySub(temperature, 32), 5), 9)
      d.fanSpeed = fanSpeed
      d.acMode = mode
      return dict({ currentACTemperature: temperature, climateMode: mode, humidityLevel: d.humidityLevel })
    }),
    get_outside_temperature_from_google: mutating<VehicleState>([], (d) => {
      const draws = d.random.draws()
      const t = float(draws.uniform(-10, 40))
      d.random = draws.done()
      // upstream writes into its module-level dict and returns it: the key goes last, once
      if (d.long_context) return asDict(ext(d as VehicleState, "LONG_WEATHER_EXTENSION")).set("outsideTemperature", t)
      return dict({ outsideTemperature: t })
    }),
    get_outside_temperature_from_weather_com: query([], () => dict({ error: 404 })),
    setHeadlights: mutating<VehicleState>(["mode"], (d, mode) => {
      if (!pyIn(mode, ["on", "off", "auto"])) return dict({ error: "Invalid headlight mode." })
      d.headLightStatus = pyEq(mode, "on") ? "on" : "off"
      return dict({ headlightStatus: d.headLightStatus })
    }),
    displayCarStatus: query(["option"], (s, option) => {
      let status = PyDict.empty
      if (s.long_context) status = status.set("metadata", ext(s, "CAR_STATUS_METADATA_EXTENSION"))
      const add = (r: Readonly<Record<string, Py>>) => {
        for (const [k, v] of Object.entries(r)) status = status.set(k, v)
      }
      if (pyEq(option, "fuel")) add({ fuelLevel: s.fuelLevel })
      else if (pyEq(option, "battery")) add({ batteryVoltage: s.batteryVoltage })
      else if (pyEq(option, "doors")) add({ doorStatus: s.doorStatus })
      else if (pyEq(option, "climate")) add({ currentACTemperature: s.acTemperature, fanSpeed: s.fanSpeed, climateMode: s.acMode, humidityLevel: s.humidityLevel })
      else if (pyEq(option, "headlights")) add({ headlightStatus: s.headLightStatus })
      else if (pyEq(option, "parkingBrake")) add({ parkingBrakeStatus: s.parkingBrakeStatus, parkingBrakeForce: s.parkingBrakeForce, slopeAngle: s.slopeAngle })
      else if (pyEq(option, "brakePedal")) add({ brakePedalStatus: s.brakePedalStatus, brakePedalForce: s.brakePedalForce })
      else if (pyEq(option, "engine")) add({ engineState: s.engine_state })
      else add({ error: "Invalid option" })
      return status
    }),
    activateParkingBrake: mutating<VehicleState>(["mode"], (d, mode) => {
      if (!pyIn(mode, ["engage", "release"])) return dict({ error: "Invalid mode" })
      const engage = pyEq(mode, "engage")
      d.parkingBrakeStatus = engage ? "engaged" : "released"
      d.parkingBrakeForce = float(engage ? 500 : 0)
      d.slopeAngle = float(10)
      const result = { parkingBrakeStatus: d.parkingBrakeStatus, _parkingBrakeForce: d.parkingBrakeForce, _slopeAngle: d.slopeAngle }
      if (d.long_context) return dict({ parkingBrakeInstruction: ext(d as VehicleState, "PARKING_BRAKE_INSTRUCTION"), ...result })
      return dict(result)
    }),
    pressBrakePedal: mutating<VehicleState>(["pedalPosition"], (d, position) => {
      if (!between(0, position, 1)) return dict({ error: "Pedal position must be between 0 and 1." })
      if (pyEq(position, 0)) {
        d.brakePedalStatus = "released"
        d.brakePedalForce = float(0)
        return dict({ brakePedalStatus: "released", brakePedalForce: float(0) })
      }
      const force = pyMul(position, 1000)
      d.brakePedalStatus = "pressed"
      d.brakePedalForce = force
      return dict({ brakePedalStatus: "pressed", brakePedalForce: float(toFloat(force)) })
    }),
    releaseBrakePedal: mutating<VehicleState>([], (d) => {
      d.brakePedalStatus = "released"
      d.brakePedalForce = float(0)
      return dict({ brakePedalStatus: "released", brakePedalForce: float(0) })
    }),
    setCruiseControl: mutating<VehicleState>(["speed", "activate", "distanceToNextVehicle"], (d, speedArg, activate, distanceArg) => {
      const distance = float(toFloat(distanceArg))
      const speed = float(toFloat(speedArg))
      if (pyEq(d.engine_state, "stopped")) return dict({ error: "Start the engine before activating the cruise control." })
      d.distanceToNextVehicle = distance
      if (truthy(activate)) {
        if (speed.value < 0 || speed.value > 120 || speed.value % 5 !== 0) return dict({ error: "Invalid speed" })
        d.cruiseStatus = "active"
      } else d.cruiseStatus = "inactive"
      return dict({ cruiseStatus: d.cruiseStatus, currentSpeed: speed, distanceToNextVehicle: distance })
    }),
    get_current_speed: mutating<VehicleState>([], (d) => {
      const draws = d.random.draws()
      const v = draws.uniform(0, 120)
      d.random = draws.done()
      return dict({ currentSpeed: float(v) })
    }),
    display_log: query(["messages"], (_, messages) => dict({ log: messages })),
    estimate_drive_feasibility_by_mileage: query(["distance"], (s, distance) =>
      dict({ canDrive: !pyCompare("<", pyMul(s.fuelLevel, float(20)), distance) })),
    liter_to_gallon: query(["liter"], (_, liter) => dict({ gallon: pyMul(liter, float(0.264172)) })),
    gallon_to_liter: query(["gallon"], (_, gallon) => dict({ liter: pyMul(gallon, float(3.78541)) })),
    estimate_distance: query(["cityA", "cityB"], (s, a, b) => {
      const hit = distances.find(([x, y]) => (pyEq(a, x) && pyEq(b, y)) || (pyEq(a, y) && pyEq(b, x)))
      let result = hit === undefined ? dict({ error: "distance not found in database." }) : dict({ distance: float(hit[2]) })
      if (s.long_context) result = result.set("intermediaryCities", ext(s, "INTERMEDIARY_CITIES"))
      return result
    }),
    get_zipcode_based_on_city: query(["city"], (_, city) => {
      const hit = Object.entries(zipcodes).find(([name]) => pyEq(city, name))
      return dict({ zipcode: hit === undefined ? "00000" : hit[1] })
    }),
    set_navigation: mutating<VehicleState>(["destination"], (d, destination) => {
      d.destination = destination
      if (typeof destination !== "string") throw typeError(`can only concatenate str (not "${typeName(destination)}") to str`)
      return dict({ status: "Navigating to " + destination })
    }),
    check_tire_pressure: query([], (s) => {
      const total = pyAdd(pyAdd(pyAdd(s.frontLeftTirePressure, s.frontRightTirePressure), s.rearLeftTirePressure), s.rearRightTirePressure)
      const healthy = between(30, pyTrueDiv(total, 4), 35)
      return dict({
        frontLeftTirePressure: s.frontLeftTirePressure,
        frontRightTirePressure: s.frontRightTirePressure,
        rearLeftTirePressure: s.rearLeftTirePressure,
        rearRightTirePressure: s.rearRightTirePressure,
        healthy_tire_pressure: healthy,
        car_info: s.long_context ? ext(s, "CAR_STATUS_METADATA_EXTENSION") : PyDict.empty
      })
    }),
    find_nearest_tire_shop: query([], () => dict({ shopLocation: "456 Oakwood Avenue, Rivermist, 83214" }))
  }
}

