// What the window's state keeps between runs (the view, the partition) and how a failed
// command is reported: paths the state slices and the command hook own.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { calls, launch, login, openApp } from "./helpers.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const activeView = (page) => page.locator("nav.sidebar [aria-current=page]").innerText();

test("the last view is remembered across a restart; a view that no longer exists gives way to the first", async () => {
  const page = await openApp(browser);
  await page.keyboard.press("Alt+7");
  await page.getByTestId("stats-luna").waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("hsmc.view")), "stats");
  await page.reload();
  await page.getByTestId("stats-luna").waitFor();
  assert.equal(await activeView(page), "Statistics");

  await page.evaluate(() => localStorage.setItem("hsmc.view", "retired-view"));
  await page.reload();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  assert.equal(await activeView(page), "Overview");
  assert.deepEqual(page.errors, []);
});

test("a remembered partition that is gone gives way to the first listed, without asking for it", async () => {
  const page = await openApp(browser);
  await page.getByText("Built-in lunasim").first().waitFor();
  const builtin = await page.evaluate(() => localStorage.getItem("hsmc.partition"));
  assert.match(builtin ?? "", /^builtin:/);
  await page.evaluate(() => localStorage.setItem("hsmc.partition", "module:gone"));
  await page.reload();
  await page.getByTestId("current-partition").filter({ hasText: "Built-in lunasim" }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("hsmc.partition")), builtin);
  const asked = (await calls(page, "partition")).map((c) => c.args.partitionId);
  assert.ok(asked.length > 0 && asked.every((id) => id === builtin), `asked for ${asked.join(", ")}`);
  assert.equal(await page.getByRole("alert").count(), 0, "no error about the vanished partition");
});

test("a command that fails is reported once as an error notification with the backend's explanation", async () => {
  const page = await openApp(browser, { objects: 3 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=bulk_key_00001]").click();
  await page.getByTestId("key-details").waitFor();
  // The key disappears from the token behind the console's back.
  await page.evaluate(() => window.__mock.keys.splice(0));
  await page.getByTestId("export-pem").click();
  const toast = page.locator(".toast-error");
  await toast.waitFor();
  assert.match(await toast.innerText(), /Export failed/);
  assert.equal(await toast.locator("[data-code=KEY_NOT_FOUND]").count(), 1);
  assert.match(await toast.innerText(), /What to do: Refresh the key list/);
  assert.equal(await page.getByTestId("pem-text").count(), 0, "no PEM shown for a failed export");
  assert.equal(await page.locator(".toast-error").count(), 1, "reported once");
  // An error stays until dismissed.
  await toast.getByRole("button", { name: "Dismiss" }).click();
  await toast.waitFor({ state: "detached" });
});
