// The status page after a warm restart, in headless Chromium (run by scripts/status-page.sh):
// every broker loaded from the route snapshot and not registered since is marked "from
// snapshot (age N s)", and its heartbeat age counts from before the restart. Fails on any page
// or console error.
//
//   node status_page_provisional.mjs URL BROKERS MIN_SILENT_SECS
// Env: PLAYWRIGHT_DIR, the directory whose node_modules holds playwright-core.
import { createRequire } from "node:module";
import path from "node:path";

const [url, brokers, minSilent] = process.argv.slice(2);
if (!minSilent) {
  console.error("usage: node status_page_provisional.mjs URL BROKERS MIN_SILENT_SECS");
  process.exit(2);
}
const require = createRequire(path.join(process.env.PLAYWRIGHT_DIR || process.cwd(), "package.json"));
const { chromium } = require("playwright-core");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const problems = [];
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-loaded=true]", { timeout: 10_000 });
  const marks = page.locator("#brokers .provisional");
  await marks.first().waitFor({ timeout: 10_000 });
  const texts = await marks.allInnerTexts();
  if (texts.length !== Number(brokers)) problems.push(`${texts.length} brokers marked, ${brokers} expected: ${texts}`);
  for (const t of texts) if (!/^from snapshot \(age \d+ s\)$/.test(t)) problems.push(`mark reads ${JSON.stringify(t)}`);
  const ages = await page.locator("#brokers .beat > span:not(.bar):not(.provisional)").allInnerTexts();
  const secs = ages.map((a) => (a.endsWith("min ago") ? parseFloat(a) * 60 : parseFloat(a)));
  if (!secs.length || secs.some((s) => !(s >= Number(minSilent))))
    problems.push(`heartbeat ages ${ages} are not counted from before the restart (at least ${minSilent} s)`);
} finally {
  await browser.close();
}
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`status page: ${brokers} brokers marked from the route snapshot`);
