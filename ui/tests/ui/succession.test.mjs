// The Keys view's succession section: a signing key names its successor and the dates, the
// request carries them as the backend takes them, the dates are checked in order, an HSS key
// needs its confirmation, and the saved statement is announced with both keys.
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

test("a key succession statement is made from the Keys view", async () => {
  const page = await openApp(browser, { ed25519Key: true, objects: 3, hssRemaining: 900 });
  await login(page);
  await page.getByText("user logged in").waitFor();
  await page.keyboard.press("Alt+3");
  await page.locator("[data-testid=key-row][data-label=release_ed25519]", { hasText: "private key" }).click();
  await page.getByTestId("key-succession").waitFor();
  assert.equal(await page.getByTestId("succession-make").isDisabled(), true, "a successor is needed");
  await page.getByTestId("succession-new").selectOption({ label: "bulk_key_00001 — ECDSA P-256" });
  await page.getByTestId("succession-from").fill("2027-03-01");
  await page.getByTestId("succession-until").fill("2027-02-01");
  await page.getByText("The transition cannot end before the new key signs.").waitFor();
  assert.equal(await page.getByTestId("succession-make").isDisabled(), true, "dates out of order");
  await page.getByTestId("succession-until").fill("2027-06-30");
  // An HSS successor spends a one-time signature: confirmed first.
  await page.getByTestId("succession-new").selectOption({ label: "fw_hss_2026_11 — HSS" });
  assert.equal(await page.getByTestId("succession-make").isDisabled(), true, "HSS needs its confirmation");
  await page.getByTestId("succession-confirm-hss").check();
  await page.getByTestId("succession-make").click();
  await page.getByText("Saved /home/officer/release_ed25519-succession.json, signed by release_ed25519 and fw_hss_2026_11.").waitFor();
  const [call] = await calls(page, "save_key_succession");
  assert.equal(call.args.newKeySignsFrom, "2027-03-01");
  assert.equal(call.args.transitionEnds, "2027-06-30");
  assert.equal(call.args.confirmHss, true);
  assert.match(call.args.oldKey, /^id:/);
  assert.match(call.args.newKey, /^id:/);
  await shot(page, "12c-key-succession");
});
