// The status page after a warm restart, in headless Chromium (run by scripts/status-page.sh):
// every broker loaded from the route snapshot and not registered since is marked "from
// snapshot (age N s)", and its heartbeat age counts from before the restart. Fails on any page
// or console error.
//
//   node status_page_provisional.mjs URL BROKERS MIN_SILENT_SECS
// Env: PLAYWRIGHT_DIR, the directory whose node_modules holds playwright-core.
import { launch, watchedPage } from "./browser.mjs";

const [url, brokers, minSilent] = process.argv.slice(2);
if (!minSilent) {
  console.error("usage: node status_page_provisional.mjs URL BROKERS MIN_SILENT_SECS");
  process.exit(2);
}
const browser = await launch();
const problems = [];
try {
  const page = await watchedPage(browser, problems);
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
