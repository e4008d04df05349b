// HA groups and usage limits in the window, against the mock backend: a group's members in
// Connections and Partition, the drift check naming the member that differs, the header's
// warning, a member down; a key's uses left, raising its limit, the limited keys' burn rate.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { calls, launch, login, openApp, shot } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test("an HA group: members in Connections and Partition, the drift check names member 2, the header warns", async () => {
  const page = await openApp(browser, { ha: "drift" });
  await login(page);
  await page.getByText("user logged in").waitFor();
  const group = page.getByTestId("ha-group-1280000100");
  await group.waitFor();
  assert.match(await group.innerText(), /HA group prod-ha/);
  assert.equal(await group.getByTestId("ha-member").count(), 2);
  const warning = page.getByTestId("ha-warning");
  await warning.waitFor();
  assert.match(await warning.innerText(), /HA prod-ha: drift on member 2/);
  await warning.click();
  const panel = page.getByTestId("ha-group");
  await panel.waitFor();
  const rows = panel.getByTestId("ha-member");
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(1).innerText(), /1280000102/);
  assert.match(await rows.nth(1).innerText(), /needs sync/);
  assert.match(await rows.nth(0).innerText(), /21\.0 %/, "the member's own busy share, side by side");
  await page.getByTestId("drift-check").click();
  const verdict = page.getByTestId("drift-verdict");
  await verdict.waitFor();
  assert.equal(await verdict.getAttribute("data-verdict"), "drift");
  assert.match(await verdict.innerText(), /drift on member 2/);
  const diffs = page.getByTestId("drift-difference");
  assert.equal(await diffs.count(), 2);
  assert.equal(await diffs.nth(0).getAttribute("data-kind"), "missing");
  assert.match(await diffs.nth(1).innerText(), /label differs/);
  assert.match(await page.getByTestId("drift-card").innerText(), /AES-ECB encryption of a zero block/);
  assert.equal((await calls(page, "ha_drift")).length, 1);
  await shot(page, "40-ha-drift");
  assert.deepEqual(page.errors, []);
});

test("a member down shows in the header and in the members table", async () => {
  const page = await openApp(browser, { ha: "member_down" });
  await login(page);
  const warning = page.getByTestId("ha-warning");
  await warning.waitFor();
  assert.match(await warning.innerText(), /member 2 down/);
  await page.keyboard.press("Alt+2");
  const rows = page.getByTestId("ha-group").getByTestId("ha-member");
  await rows.nth(1).waitFor();
  assert.equal(await rows.nth(1).getAttribute("data-alive"), "false");
  assert.match(await rows.nth(1).innerText(), /CKR_UNABLE_TO_CONNECT/);
  assert.deepEqual(page.errors, []);
});

test("a partition in sync raises no warning, and one that is no group shows no HA panel", async () => {
  const page = await openApp(browser, { ha: "in_sync" });
  await login(page);
  await page.keyboard.press("Alt+2");
  await page.getByTestId("ha-group").waitFor();
  assert.equal(await page.getByTestId("ha-warning").count(), 0);
  const plain = await openApp(browser);
  await login(plain);
  await plain.keyboard.press("Alt+2");
  await plain.getByTestId("mechanism-table").waitFor();
  assert.equal(await plain.getByTestId("ha-group").count(), 0);
  assert.deepEqual(plain.errors, []);
});

test("usage limits: uses left on the key, the limit raised, and the burn rate in the HSS view", async () => {
  const page = await openApp(browser, { usageLimit: 5 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator('[data-testid=key-row][data-label="limited_ecdsa_2026_11"]').first().click();
  const line = page.getByTestId("usage-line");
  await line.waitFor();
  assert.match(await line.innerText(), /3 of 5 uses left/);
  await page.getByTestId("usage-limit-button").click();
  await page.getByTestId("usage-limit-input").fill("10");
  await page.getByTestId("usage-limit-save").click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
  await page.getByText("8 of 10 uses left").first().waitFor();
  const set = await calls(page, "set_usage_limit");
  assert.equal(set.length, 1);
  assert.equal(set[0].args.limit, 10);
  await page.keyboard.press("Alt+6");
  const row = page.locator('[data-testid=usage-row][data-label="limited_ecdsa_2026_11"]');
  await row.waitFor();
  assert.match(await row.innerText(), /8 of 10 uses left/);
  assert.match(await row.innerText(), /2027-01-15/);
  // Its uses left over time, as the HSS keys' signatures left.
  const chart = page.getByTestId("usage-chart");
  await chart.waitFor();
  assert.match(await chart.textContent(), /limited_ecdsa_2026_11: uses left/);
  await shot(page, "41-usage-limits");
  assert.deepEqual(page.errors, []);
});

test("a probe on a group shows each member's share and the group's total", async () => {
  const page = await openApp(browser, { ha: "in_sync" });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+8");
  await page.getByTestId("probe-op").selectOption("ml-dsa-65-sign");
  await page.getByTestId("probe-run").click();
  const ha = page.getByTestId("probe-ha");
  await ha.waitFor();
  assert.match(await ha.innerText(), /66\.0 calls\/s in all/);
  assert.equal(await ha.getByTestId("probe-ha-member").count(), 2);
  assert.match(await ha.getByTestId("probe-ha-member").nth(1).innerText(), /1280000102\s+50\.0 %\s+33\.0\/s/);
  assert.deepEqual(page.errors, []);
});
