// The probe report's latency charts: labels in the unit that reads best.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launch, login, openApp } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test("the latency histogram labels its buckets in µs, ms or s, without µs decimals", async () => {
  const page = await openApp(browser);
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+8");
  await page.getByTestId("probe-op").selectOption("ml-dsa-65-sign");
  await page.getByTestId("probe-workers").fill("1");
  await page.getByTestId("probe-run").click();
  await page.getByTestId("probe-report").waitFor();
  const chart = page.getByTestId("probe-chart-histogram");
  await chart.waitFor();
  // The mock's buckets end at 849.7 µs, 1234.567 µs, 15 000 µs and 1 500 000 µs.
  const labels = (await chart.locator(".chart-bar title").allTextContents()).map((l) => l.split(" · ")[0]);
  assert.deepEqual(labels, ["≤ 850 µs", "≤ 1.2 ms", "≤ 15 ms", "≤ 1.5 s"]);
  const text = await chart.innerText();
  assert.doesNotMatch(text, /\d[.,]\d{3}\b(?!\s*ms)/, `no three-decimal microseconds: ${text}`);
  assert.doesNotMatch(text, /1,234|1234/, text);
  // The latency-over-time chart's ticks are in the same units.
  const ticks = await page.getByTestId("probe-chart-latency").innerText();
  assert.match(ticks, /\d+ ms/, ticks);
});
