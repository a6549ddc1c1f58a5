/**
 * The tasks: find the products that compete with one product of the market in web.ts. Each task
 * holds its reference set (the competitors the pages establish, each with the hosts that count as
 * its site) and, for the gold candidate, one grounded entry per competitor: a claim, a quote
 * copied from a page's text, and that page. The reference sets and gold entries stay in this
 * module, private to the provider's capabilities.
 */

export interface GoldEntry {
  readonly claim: string
  readonly quote: string
  readonly source: string
}

export interface Reference {
  readonly name: string
  readonly site: string
  /** Hosts that count as this product's site (without `www.`). */
  readonly hosts: ReadonlyArray<string>
  readonly gold: GoldEntry
}

export interface DiscoveryTask {
  readonly id: string
  readonly stratum: "scheduling" | "bookkeeping" | "menus"
  readonly product: string
  readonly productSite: string
  /** What the product does, as the judge is told it. */
  readonly market: string
  /** Searches the candidate may make in one Attempt. */
  readonly searches: number
  /** The search the gold candidate makes before fetching its sources. */
  readonly goldQuery: string
  readonly references: ReadonlyArray<Reference>
  /** Products the pages show are not competitors (look-alike names, closed, adjacent): reported, never rewarded. */
  readonly nonCompetitors: ReadonlyArray<{ readonly name: string; readonly hosts: ReadonlyArray<string> }>
}

const rosterly = {
  name: "Rosterly",
  site: "https://rosterly.example/",
  hosts: ["rosterly.example"],
  gold: {
    claim: "Rosterly is shift scheduling software for restaurants, with shift swaps from staff phones.",
    quote: "Rosterly is shift scheduling software for restaurants, bars and cafés.",
    source: "https://rosterly.example/"
  }
}
const shifthound = {
  name: "ShiftHound",
  site: "https://shifthound.example/",
  hosts: ["shifthound.example"],
  gold: {
    claim: "ShiftHound builds restaurant shift schedules and texts each shift to staff.",
    quote: "ShiftHound builds drag-and-drop shift schedules for restaurants and cafés, and sends every shift to your staff's phones by text message.",
    source: "https://shifthound.example/"
  }
}
const crewplan = {
  name: "Crewplan",
  site: "https://crewplan.example/",
  hosts: ["crewplan.example"],
  gold: {
    claim: "Crewplan schedules restaurant staff from a sales forecast.",
    quote: "Crewplan forecasts covers from your POS sales and suggests the right number of servers and cooks for every shift.",
    source: "https://crewplan.example/"
  }
}
const tablewiseSchedules = {
  name: "Tablewise Schedules",
  site: "https://schedules.tablewise.example/",
  hosts: ["schedules.tablewise.example"],
  gold: {
    claim: "Tablewise Schedules plans restaurant shifts around reservations.",
    quote: "Tablewise Schedules plans restaurant shifts around your reservations, so the busiest nights are staffed before the first guest books.",
    source: "https://schedules.tablewise.example/"
  }
}

const schedulingDecoys = [
  { name: "PunchClock Pro", hosts: ["punchclock.example"] },
  { name: "ShiftHound Kennels", hosts: ["shifthoundkennels.example"] },
  { name: "Shiftly", hosts: ["shiftly.example"] },
  { name: "Tablewise Reservations", hosts: ["tablewise.example"] }
]

export const tasks: ReadonlyArray<DiscoveryTask> = [
  {
    id: "rosterly",
    stratum: "scheduling",
    product: "Rosterly",
    productSite: "https://rosterly.example/",
    market: "shift scheduling software for restaurants, bars and cafés",
    searches: 6,
    goldQuery: "Rosterly alternatives restaurant scheduling",
    references: [shifthound, crewplan, tablewiseSchedules],
    nonCompetitors: schedulingDecoys
  },
  {
    id: "shifthound",
    stratum: "scheduling",
    product: "ShiftHound",
    productSite: "https://shifthound.example/",
    market: "shift scheduling software for restaurants and cafés",
    searches: 6,
    goldQuery: "best restaurant scheduling apps",
    references: [rosterly, crewplan, tablewiseSchedules],
    nonCompetitors: schedulingDecoys
  },
  {
    id: "ledgerline",
    stratum: "bookkeeping",
    product: "Ledgerline",
    productSite: "https://ledgerline.example/",
    market: "bookkeeping software made for restaurants",
    searches: 5,
    goldQuery: "restaurant bookkeeping software compared",
    references: [
      {
        name: "Sumwell",
        site: "https://sumwell.example/",
        hosts: ["sumwell.example"],
        gold: {
          claim: "Sumwell is accounting software for independent restaurants that reconciles card deposits.",
          quote: "Sumwell is accounting for independent restaurants. It reconciles card deposits against daily sales",
          source: "https://sumwell.example/"
        }
      },
      {
        name: "Backhouse Books",
        site: "https://backhousebooks.example/",
        hosts: ["backhousebooks.example"],
        gold: {
          claim: "Backhouse Books keeps restaurant books by coding supplier invoices.",
          quote: "Backhouse Books reads your supplier invoices, codes each line to the right food or beverage account",
          source: "https://backhousebooks.example/"
        }
      }
    ],
    nonCompetitors: [{ name: "TipTally", hosts: ["tiptally.example"] }]
  },
  {
    id: "menumuse",
    stratum: "menus",
    product: "MenuMuse",
    productSite: "https://menumuse.example/",
    market: "QR code menus for restaurants",
    searches: 5,
    goldQuery: "QR menu builders compared",
    references: [
      {
        name: "Plated Menus",
        site: "https://platedmenus.example/",
        hosts: ["platedmenus.example"],
        gold: {
          claim: "Plated Menus builds QR code menus for restaurant tables.",
          quote: "Plated Menus gives every table a QR code that opens your menu in the guest's browser",
          source: "https://platedmenus.example/"
        }
      },
      {
        name: "QRtable",
        site: "https://qrtable.example/",
        hosts: ["qrtable.example"],
        gold: {
          claim: "QRtable makes QR menus that guests can order and pay from.",
          quote: "QRtable turns your paper menu into a QR menu in ten minutes, and guests can order and pay from their table.",
          source: "https://qrtable.example/"
        }
      }
    ],
    nonCompetitors: [{ name: "Plated", hosts: ["plated-kits.example"] }]
  }
]
