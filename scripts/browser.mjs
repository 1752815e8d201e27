// What the status-page checks share (run by scripts/status-page.sh): headless Chromium driven by
// playwright-core from PLAYWRIGHT_DIR, and a page whose errors are collected.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.PLAYWRIGHT_DIR || process.cwd(), "package.json"));
const { chromium } = require("playwright-core");

/** Headless Chromium (CHROMIUM, default /usr/bin/chromium) with networking extras off. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}

/** A new page of `browser` whose page errors, console errors and failed requests go to `problems`. */
export async function watchedPage(browser, problems, options = {}) {
  const page = await browser.newPage(options);
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  return page;
}
