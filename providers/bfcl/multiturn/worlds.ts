/** The simulated API classes ported so far, by the name upstream's tasks use. */
import type { AnyApi } from "./api.ts"
import { GorillaFileSystem } from "./filesystem.ts"
import { MathAPI } from "./math.ts"
import { MessageAPI } from "./message.ts"
import { TicketAPI } from "./ticket.ts"
import { TradingBot } from "./trading.ts"
import { TravelAPI } from "./travel.ts"
import { TwitterAPI } from "./twitter.ts"
import { VehicleControlAPI } from "./vehicle.ts"

export const apis: ReadonlyArray<AnyApi> = [MathAPI, MessageAPI, TwitterAPI, TicketAPI, VehicleControlAPI, TradingBot, TravelAPI, GorillaFileSystem]
