// After the HSM reconnects, the console announces the partition as changed with a new module
// generation; the key list is read again by itself (its handles may be new numbers), and
// not on every other partition change.
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

test("a reconnection makes the Keys view read the key list again", async () => {
  const page = await openApp(browser, { objects: 5 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.getByTestId("key-table").waitFor();
  await page.getByTestId("key-row").first().waitFor();
  const listed = async () => (await calls(page, "list_keys")).length;
  const partitions = async () => (await calls(page, "partition")).length;

  // A change that is not a reconnection: the partition is read again, the list is not.
  let before = await listed();
  let read = await partitions();
  const id = (await calls(page, "partition"))[0].args.partitionId;
  await page.evaluate((partition_id) => window.__mock.event({ kind: "partition_changed", partition_id }), id);
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "partition").length > n, read);
  assert.equal(await listed(), before, "no new generation, no new listing");

  before = await listed();
  read = await partitions();
  await page.evaluate(() => window.__mock.reconnect());
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "list_keys").length > n, before);
  assert.ok((await partitions()) > read);
  assert.deepEqual(page.errors, []);
});
