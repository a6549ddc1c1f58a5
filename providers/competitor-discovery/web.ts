/**
 * The frozen web of competitor-discovery: a small fictional market of software for restaurants,
 * written for assay. Every host is under the reserved `.example` top-level domain (RFC 2606), so
 * no page can be mistaken for a real site. Vendors' sites, comparison posts, reviews and decoys
 * (look-alike names, a product that shut down, adjacent tools that compete with nothing here).
 */
import type { FrozenWeb } from "../../src/index.ts"

const page = (url: string, title: string, body: string): FrozenWeb.Page => ({
  url,
  title,
  html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><style>body { font-family: sans-serif }</style><script>var analytics = "not text";</script></head>
<body>
<nav><a href="${new URL(url).origin}/">Home</a></nav>
<main>
${body.trim()}
</main>
<footer><p>&copy; 2026 ${new URL(url).hostname}. All rights reserved.</p></footer>
</body>
</html>
`
})

export const pages: ReadonlyArray<FrozenWeb.Page> = [
  // ---------------------------------------------------------------------------------------------
  // Staff scheduling for restaurants
  page("https://rosterly.example/", "Rosterly - shift scheduling for restaurants", `
<h1>Rosterly</h1>
<p>Rosterly is shift scheduling software for restaurants, bars and caf&eacute;s. Build next week&rsquo;s rota in minutes, let staff swap shifts from their phones, and keep labour cost under your target.</p>
<h2>Why teams pick Rosterly</h2>
<ul>
<li>Drag-and-drop weekly rotas with templates for every station.</li>
<li>Shift swaps approved by a manager in one tap.</li>
<li>Labour cost shown against forecast sales as you build the schedule.</li>
</ul>
<p><a href="https://rosterly.example/pricing">See pricing</a></p>`),
  page("https://rosterly.example/pricing", "Rosterly pricing", `
<h1>Pricing</h1>
<p>Rosterly costs <strong>$3 per employee per month</strong>, billed monthly, with a free plan for one location of up to 10 staff.</p>
<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Free</td><td>$0, one location, 10 staff</td></tr><tr><td>Team</td><td>$3 per employee per month</td></tr></table>`),

  page("https://shifthound.example/", "ShiftHound - restaurant schedules that text your team", `
<h1>ShiftHound</h1>
<p>ShiftHound builds drag-and-drop shift schedules for restaurants and caf&eacute;s, and sends every shift to your staff&rsquo;s phones by text message.</p>
<p>Over 4,000 restaurants schedule their front and back of house with ShiftHound.</p>
<p><a href="https://shifthound.example/features">Features</a></p>`),
  page("https://shifthound.example/features", "ShiftHound features", `
<h1>Features</h1>
<h2>Scheduling</h2>
<p>Copy last week&rsquo;s schedule, fill open shifts automatically, and let staff pick up shifts from the app.</p>
<h2>Time off</h2>
<p>Time-off requests land in one inbox, and ShiftHound warns you before you schedule someone who asked for the day off.</p>`),

  page("https://crewplan.example/", "Crewplan - labour forecasting and scheduling", `
<h1>Crewplan</h1>
<p>Crewplan forecasts covers from your POS sales and suggests the right number of servers and cooks for every shift.</p>
<p>Publish the schedule to the Crewplan app and your team gets it instantly. <a href="https://crewplan.example/forecasting">How forecasting works</a></p>`),
  page("https://crewplan.example/forecasting", "How Crewplan forecasting works", `
<h1>Forecasting</h1>
<p>Crewplan reads two years of sales from your point of sale, learns your busy hours, and turns the forecast into a staffing plan per station.</p>
<p>Managers using Crewplan cut labour cost by 4% on average in their first quarter.</p>`),

  page("https://tablewise.example/", "Tablewise - reservations for restaurants", `
<h1>Tablewise</h1>
<p>Tablewise Reservations takes bookings from your website and Google, and keeps your floor plan up to date.</p>
<p>Need staff schedules too? <a href="https://schedules.tablewise.example/">Tablewise Schedules</a> is our scheduling product, sold separately.</p>`),
  page("https://schedules.tablewise.example/", "Tablewise Schedules", `
<h1>Tablewise Schedules</h1>
<p>Tablewise Schedules plans restaurant shifts around your reservations, so the busiest nights are staffed before the first guest books.</p>
<p>It works on its own or beside Tablewise Reservations, from $2.50 per staff member per month.</p>`),

  page("https://punchclock.example/", "PunchClock Pro - time clock for hourly teams", `
<h1>PunchClock Pro</h1>
<p>PunchClock Pro turns any tablet into a time clock with photo check-in, and exports timesheets to payroll.</p>
<p>PunchClock Pro does not build schedules: it records the hours your team actually worked.</p>`),

  page("https://shifthoundkennels.example/", "ShiftHound Kennels - dog boarding in Leeds", `
<h1>ShiftHound Kennels</h1>
<p>ShiftHound Kennels is a family-run dog boarding kennel in Leeds, with heated runs and two walks a day.</p>
<p>Book a stay by phone; we are open seven days a week.</p>`),

  page("https://shiftly.example/", "Shiftly has closed", `
<h1>Shiftly has closed</h1>
<p>Shiftly shut down on 31 March 2024. Thank you to every restaurant that scheduled with us for eight years.</p>
<p>Your data was deleted on 30 June 2024. We can no longer answer support requests.</p>`),

  // ---------------------------------------------------------------------------------------------
  // Bookkeeping for restaurants
  page("https://ledgerline.example/", "Ledgerline - bookkeeping for restaurants", `
<h1>Ledgerline</h1>
<p>Ledgerline is bookkeeping software made for restaurants: it imports your daily sales, categorises supplier bills and closes the month for you.</p>
<p>Food cost and labour cost as a share of sales, every morning.</p>`),
  page("https://sumwell.example/", "Sumwell - restaurant accounting", `
<h1>Sumwell</h1>
<p>Sumwell is accounting for independent restaurants. It reconciles card deposits against daily sales and flags every payout that does not match.</p>
<p><a href="https://sumwell.example/features">All features</a></p>`),
  page("https://sumwell.example/features", "Sumwell features", `
<h1>Features</h1>
<ul><li>Daily sales imported from 30 point-of-sale systems.</li><li>Prime cost report every Monday.</li><li>Your accountant gets read-only access for free.</li></ul>`),
  page("https://backhousebooks.example/", "Backhouse Books - the restaurant back office", `
<h1>Backhouse Books</h1>
<p>Backhouse Books reads your supplier invoices, codes each line to the right food or beverage account, and keeps your restaurant&rsquo;s books ready for tax time.</p>`),
  page("https://tiptally.example/", "TipTally - tip pooling made fair", `
<h1>TipTally</h1>
<p>TipTally splits pooled tips by hours and role, and pays them out to staff the next morning.</p>
<p>TipTally is not accounting software; it connects to the books you already use.</p>`),

  // ---------------------------------------------------------------------------------------------
  // QR menus
  page("https://menumuse.example/", "MenuMuse - digital menus", `
<h1>MenuMuse</h1>
<p>MenuMuse lets restaurants design a QR code menu, change prices in seconds, and hide a dish the moment it sells out.</p>`),
  page("https://platedmenus.example/", "Plated Menus - QR menus and ordering", `
<h1>Plated Menus</h1>
<p>Plated Menus gives every table a QR code that opens your menu in the guest&rsquo;s browser, with photos and allergens on every dish.</p>
<p><a href="https://platedmenus.example/pricing">Pricing</a></p>`),
  page("https://platedmenus.example/pricing", "Plated Menus pricing", `
<h1>Pricing</h1>
<p>One menu is free forever. Unlimited menus and table ordering cost $19 per location per month.</p>`),
  page("https://qrtable.example/", "QRtable - menus guests can order from", `
<h1>QRtable</h1>
<p>QRtable turns your paper menu into a QR menu in ten minutes, and guests can order and pay from their table.</p>`),
  page("https://plated-kits.example/", "Plated - recipe kits delivered", `
<h1>Plated</h1>
<p>Plated delivers weekly recipe kits with pre-portioned ingredients to home cooks across the country.</p>`),

  // ---------------------------------------------------------------------------------------------
  // Comparison posts
  page("https://hospitalitytech-blog.example/best-restaurant-scheduling-apps", "The best restaurant scheduling apps in 2026", `
<h1>The best restaurant scheduling apps in 2026</h1>
<p>We scheduled a 40-person restaurant for a month with each of these tools.</p>
<h2>1. Rosterly</h2>
<p>The fastest rota builder we tried, and the cheapest per head. <a href="https://rosterly.example/">rosterly.example</a></p>
<h2>2. ShiftHound</h2>
<p>Best for teams that live on text messages. <a href="https://shifthound.example/">shifthound.example</a></p>
<h2>3. Crewplan</h2>
<p>Best forecasting: it tells you how many people to schedule, not just who. <a href="https://crewplan.example/">crewplan.example</a></p>
<h2>4. Tablewise Schedules</h2>
<p>Best if you already take bookings with Tablewise. <a href="https://schedules.tablewise.example/">schedules.tablewise.example</a></p>
<h2>Not on this list</h2>
<p>PunchClock Pro is a time clock, not a scheduler, and Shiftly closed in 2024.</p>`),
  page("https://switchboard-reviews.example/rosterly-alternatives", "Rosterly alternatives", `
<h1>Rosterly alternatives</h1>
<p>Looking for something other than Rosterly? The three schedulers restaurant managers most often switch to are ShiftHound, Crewplan and Tablewise Schedules.</p>
<p>Readers sometimes suggest ShiftHound Kennels, which is a dog kennel with a similar name.</p>`),
  page("https://hospitalitytech-blog.example/restaurant-bookkeeping-compared", "Restaurant bookkeeping software compared", `
<h1>Restaurant bookkeeping software compared</h1>
<p>Three tools do the books for restaurants specifically: Ledgerline, Sumwell and Backhouse Books.</p>
<p>Sumwell is strongest at bank reconciliation; Backhouse Books at supplier invoices; Ledgerline at the monthly close.</p>
<p>TipTally often comes up in the same conversations, but it only handles tips.</p>`),
  page("https://menuguide.example/qr-menu-builders", "QR menu builders compared", `
<h1>QR menu builders compared</h1>
<p>MenuMuse, Plated Menus and QRtable all build QR code menus for restaurants.</p>
<p>Don&rsquo;t confuse Plated Menus with Plated, the recipe-kit company.</p>`),

  // ---------------------------------------------------------------------------------------------
  // Reviews
  page("https://reviewhub.example/shifthound", "ShiftHound review", `
<h1>ShiftHound review: 4.5 stars</h1>
<blockquote><p>&ldquo;Our servers stopped missing shifts once ShiftHound started texting them the night before.&rdquo;</p></blockquote>
<p>Reviewed by a general manager of a 60-seat bistro.</p>`),
  page("https://reviewhub.example/crewplan", "Crewplan review", `
<h1>Crewplan review: 4 stars</h1>
<p>The forecast was within five covers of our real Saturday numbers after two weeks.</p>`),
  page("https://reviewhub.example/sumwell", "Sumwell review", `
<h1>Sumwell review: 4.5 stars</h1>
<p>Month-end went from three days to one afternoon once Sumwell matched our card deposits.</p>`),
  page("https://reviewhub.example/qrtable", "QRtable review", `
<h1>QRtable review: 4 stars</h1>
<p>Table ordering raised our average check, though setup of modifiers took a while.</p>`),

  // ---------------------------------------------------------------------------------------------
  // Decoys and noise
  page("https://forum.example/t/which-scheduling-app", "Forum: which scheduling app?", `
<h1>Which scheduling app do you use?</h1>
<p><strong>mia_gm:</strong> We used Shiftly for years until it closed. Now on Rosterly.</p>
<p><strong>chef_tom:</strong> PunchClock Pro for clocking in, but it can&rsquo;t do the rota.</p>`),
  page("https://localnews.example/kennel-second-site", "ShiftHound Kennels opens a second site", `
<h1>ShiftHound Kennels opens a second site</h1>
<p>The Leeds dog boarding business ShiftHound Kennels has opened a second site with room for forty dogs.</p>`),
  page("https://press.example/tablewise-funding", "Tablewise raises a Series B", `
<h1>Tablewise raises a Series B</h1>
<p>Tablewise, maker of Tablewise Reservations and Tablewise Schedules, raised $30 million to expand in Europe.</p>`)
]
