// The status page in headless Chromium (driven by playwright-core, run by scripts/status-page.sh):
// loads `/`, waits for live data, checks that the expected broker and topic are in the DOM, that
// the charts drew real series, and that searching a topic shows its route; then saves a
// screenshot. Fails on any page error or console error.
//
//   node status_page.mjs URL SCREENSHOT.png BROKER TOPIC
// Env: PLAYWRIGHT_DIR, the directory whose node_modules holds playwright-core.
import { launch, watchedPage } from "./browser.mjs";

const [url, screenshot, broker, topic] = process.argv.slice(2);
if (!topic) {
  console.error("usage: node status_page.mjs URL SCREENSHOT.png BROKER TOPIC");
  process.exit(2);
}
const browser = await launch();
const problems = [];
try {
  const page = await watchedPage(browser, problems, { viewport: { width: 1440, height: 700 }, deviceScaleFactor: 1 });
  await page.goto(url, { waitUntil: "load" });

  // Live data: the first refresh finished, then the broker and topic are listed.
  await page.waitForSelector("body[data-loaded=true]", { timeout: 10_000 });
  await page.locator("#brokers").getByText(broker, { exact: true }).first().waitFor({ timeout: 10_000 });
  await page.locator("#topics").getByText(topic, { exact: true }).waitFor({ timeout: 10_000 });
  check((await page.locator("#cards").innerText()).match(/Brokers\s+(\d+)/)?.[1] !== "0", "the Brokers card says 0");

  // Search with the first five letters of the topic: only matching topics stay; pick the topic,
  // and its route table names the broker.
  const part = topic.slice(0, 5);
  const all = await page.locator("#topics .topic").count();
  await page.fill("#search", part);
  await page.waitForFunction(
    ([part, all]) => {
      const chips = [...document.querySelectorAll("#topics .topic")].map((e) => e.textContent);
      return chips.length > 0 && chips.length < all && chips.every((t) => t.includes(part));
    },
    [part, all],
    { timeout: 10_000 },
  );
  await page.locator("#topics").getByText(topic, { exact: true }).click();
  await page.locator("#route table").getByText(broker, { exact: true }).first().waitFor({ timeout: 10_000 });

  // The charts sample every 5 s: wait until each has drawn a line (at least two points).
  await page.waitForFunction(() => document.querySelectorAll(".chart svg polyline.line").length === 4, null, {
    timeout: 40_000,
    polling: 500,
  });
  const rate = await page.locator("#chart-rate").getAttribute("data-last");
  check(Number(rate) > 0, `the request-rate chart's last point is ${rate}, not above 0`);

  const hold = Number(process.env.HOLD_SECS || 0);
  if (hold > 0) await page.waitForTimeout(hold * 1000); // more chart points for a picture
  await page.locator("#search").blur();
  await page.waitForTimeout(300);
  await page.screenshot({ path: screenshot, fullPage: true });
  const brokers = await page.locator("#brokers tr.broker").count();
  console.log(`status page: ${brokers} broker rows, topic ${topic} routed to ${broker}, charts drawn; screenshot ${screenshot}`);
} catch (e) {
  problems.push(String(e));
} finally {
  await browser.close();
}
if (problems.length) {
  for (const p of problems) console.error("FAIL:", p);
  process.exit(1);
}

function check(ok, message) {
  if (!ok) problems.push(message);
}
